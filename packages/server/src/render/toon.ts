import type { ToolResult } from "@codemux/core";
import { estimateTokens } from "@codemux/core";
import { encode } from "@toon-format/toon";

/** How text results reach a model: as the tool gave them (`json`), or JSON re-encoded as TOON where that is shorter. */
export type ResultFormat = "json" | "toon";
export const RESULT_FORMATS: readonly ResultFormat[] = ["json", "toon"];

/**
 * Largest text re-encoded: inline answers are at most the spill threshold (64 KB by default), and
 * encoding, linear, costs about 50 ms a megabyte of the event loop.
 */
export const MAX_TOON_INPUT_CHARS = 256 * 1024;
const TOON_MARGIN = 0.9;

/**
 * A JSON object or array as TOON (`files[2]{name,size}:` then one row each), or as compact JSON when
 * that is shorter still (TOON saves on tables, not on deep or irregular objects); undefined for
 * anything else (not JSON, a scalar, too large, or nothing shorter than the text as given). A top-level
 * `estimatedTokens` is an answer's own size (execute_code's): it is given again for the new text.
 */
export function toonText(text: string): string | undefined {
  if (text.length > MAX_TOON_INPUT_CHARS) return undefined;
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const ownSize =
    typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as { estimatedTokens?: unknown }).estimatedTokens === "number";
  let toon = encode(value);
  if (ownSize) {
    const { estimatedTokens: _, ...rest } = value as Record<string, unknown>;
    const body = encode(rest);
    toon = `${body}\nestimatedTokens: ${estimateTokens(body) + 5}`;
  }
  const compact = JSON.stringify(value);
  // TOON must be clearly shorter: its indentation costs more tokens a character than JSON's punctuation (pnpm bench, memory read_graph).
  const best = toon.length <= compact.length * TOON_MARGIN ? toon : compact;
  return best.length < text.length ? best : undefined;
}

/** The result with each JSON text part in TOON where that is shorter; structured content (for programs) stays JSON. */
export function asToon(result: ToolResult): ToolResult {
  let changed = false;
  const content = (result.content ?? []).map((part) => {
    if (part.type !== "text") return part;
    const toon = toonText(part.text);
    if (toon === undefined) return part;
    changed = true;
    return { ...part, text: toon };
  });
  return changed ? { ...result, content } : result;
}
