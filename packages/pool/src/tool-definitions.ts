import type { Tool } from "@modelcontextprotocol/client";
import { ToolSchema } from "@modelcontextprotocol/core";
import { z } from "zod";

/** A `tools/list` page read without judging its tools: each is checked on its own (`cleanTools`), so one bad definition costs only itself. */
export const LooseToolsPageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** Fields a tool serves without: one of the wrong type is dropped and the tool kept. A bad name or schema drops the tool. */
const OPTIONAL_FIELDS = new Set(["title", "description", "icons", "annotations", "_meta"]);

export interface CleanedTools {
  tools: Tool[];
  /** What was dropped and why, one sentence each: `tool "x": dropped annotations.readOnlyHint (expected boolean, received string)`. */
  problems: string[];
}

/**
 * Keeps every definition that fits the spec's Tool; from one that does not, drops the bad optional fields (an annotation of the
 * wrong type is dropped, never coerced: `readOnlyHint: "true"` read as true would make a policy trust a hint the server never gave
 * right), and the tool itself only when its name or schemas are bad.
 */
export function cleanTools(raw: unknown[]): CleanedTools {
  const tools: Tool[] = [];
  const problems: string[] = [];
  raw.forEach((entry, index) => {
    const first = ToolSchema.safeParse(entry);
    if (first.success) {
      tools.push(first.data as Tool);
      return;
    }
    const name = typeof (entry as { name?: unknown })?.name === "string" ? `tool "${(entry as { name: string }).name}"` : `tool #${index + 1}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      problems.push(`${name}: dropped (not an object)`);
      return;
    }
    const copy: Record<string, unknown> = { ...entry };
    const dropped: string[] = [];
    for (const issue of first.error.issues) {
      const [field, inner] = issue.path;
      if (typeof field !== "string" || !OPTIONAL_FIELDS.has(field) || !(field in copy)) continue;
      const holder = copy[field];
      if (field === "annotations" && typeof inner === "string" && typeof holder === "object" && holder !== null && !Array.isArray(holder)) {
        const { [inner]: _, ...rest } = holder as Record<string, unknown>;
        copy.annotations = rest;
        dropped.push(`annotations.${inner} (${issue.message.replace(/^Invalid input: /, "")})`);
      } else {
        delete copy[field];
        dropped.push(`${field} (${issue.message.replace(/^Invalid input: /, "")})`);
      }
    }
    const second = ToolSchema.safeParse(copy);
    if (second.success) {
      tools.push(second.data as Tool);
      problems.push(`${name}: dropped ${dropped.join(", ")}`);
      return;
    }
    const why = second.error.issues[0];
    problems.push(`${name}: dropped the tool (${why ? `${why.path.join(".") || "definition"}: ${why.message.replace(/^Invalid input: /, "")}` : "invalid"})`);
  });
  return { tools, problems };
}
