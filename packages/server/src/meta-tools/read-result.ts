import { runInNewContext } from "node:vm";
import { GREP_TIMEOUT_MS, MAX_GREP_CONTEXT, MAX_GREP_MATCHES, MAX_GREP_PATTERN_CHARS, MAX_LINE_CHARS, MAX_PAGE_CHARS } from "../defaults";
import { defineMetaTool, estimateTokens, textResult } from "@codemux/core";
import { BadRequestError } from "../errors";
import { topLevelKeys } from "../render/limit-result";
import type { KeptResult } from "../results";
import type { CodemuxServices } from "../services";

type Op = "stat" | "head" | "tail" | "slice" | "grep" | "read";

export interface ReadResultRequest {
  handle: string;
  op: Op;
  lines?: number;
  from?: number;
  to?: number;
  pattern?: string;
  context?: number;
  fromByte?: number;
  maxBytes?: number;
}

/** read_result never answers more than this, whatever maxBytes asks: it must never need a handle of its own. */
const MAX_READ_BYTES = MAX_PAGE_CHARS;

export const readResult = defineMetaTool<ReadResultRequest, CodemuxServices>({
  name: "read_result",
  // The preview that hands out a handle names the ops too, so this stays short.
  description: "Page a large kept result (handle from its preview; ~4 characters a token): head/tail lines, slice from..to, grep pattern ± context.",
  inputSchema: {
    type: "object",
    properties: {
      handle: { type: "string", maxLength: 100 },
      op: { type: "string", enum: ["stat", "head", "tail", "slice", "grep", "read"], default: "stat" },
      lines: { type: "integer", minimum: 1, default: 50 },
      from: { type: "integer", minimum: 1 },
      to: { type: "integer", minimum: 1 },
      pattern: { type: "string", maxLength: MAX_GREP_PATTERN_CHARS },
      context: { type: "integer", minimum: 0, maximum: MAX_GREP_CONTEXT, default: 0 },
      // op "read" answers with the fromByte to go on from, so these need no room in the listing.
      fromByte: { type: "integer", minimum: 0, default: 0, unlisted: true },
      maxBytes: { type: "integer", minimum: 1, maximum: MAX_READ_BYTES, default: MAX_READ_BYTES, unlisted: true },
    },
    required: ["handle"],
  },
  annotations: { readOnlyHint: true },
  run: async (request, { services, session }) => {
    const kept = await services.results.get(request.handle, session.id);
    const text = await services.results.read(kept.handle, session.id);
    return textResult(readKept(kept, text, request));
  },
});

/** One read_result answer over a kept text; every op's line numbers and counts agree (a final newline ends the last line, it does not start one). */
export function readKept(kept: KeptResult, text: string, request: ReadResultRequest): string {
  if (request.op === "stat") return JSON.stringify(keptStat(kept, text));
  if (request.op === "read") return readBytes(text, request.fromByte ?? 0, request.maxBytes ?? MAX_READ_BYTES);
  const lines = splitLines(text);
  switch (request.op) {
    case "head":
      return page(lines, 1, request.lines ?? 50);
    case "tail":
      return page(lines, Math.max(1, lines.length - (request.lines ?? 50) + 1), lines.length);
    case "slice":
      if (request.from === undefined) throw new BadRequestError('slice needs "from" (first line, 1-based) and optionally "to".');
      if (request.to !== undefined && request.to < request.from) throw new BadRequestError(`"to" (${request.to}) comes before "from" (${request.from}).`);
      return page(lines, request.from, request.to ?? request.from + 49);
    case "grep":
      return grep(lines, request.pattern, request.context ?? 0);
  }
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

/** What a kept result is: its size, lines, estimated tokens, its first keys when it is a JSON object, and when it expires. */
export function keptStat(kept: KeptResult, text: string): Record<string, unknown> {
  return {
    handle: kept.handle,
    tool: kept.tool,
    bytes: kept.bytes,
    lines: kept.lines,
    estimatedTokens: estimateTokens(text),
    ...topLevelKeys(text),
    expiresAt: new Date(kept.expiresAt).toISOString(),
  };
}

/** Bytes `fromByte`.. of the text, up to `maxBytes`, cut on a character boundary, with where to go on. */
function readBytes(text: string, fromByte: number, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (fromByte >= bytes.length && bytes.length > 0) return `The result has ${bytes.length} bytes; byte ${fromByte} is past the end.`;
  let end = Math.min(bytes.length, fromByte + Math.min(maxBytes, MAX_READ_BYTES));
  // Never cut a UTF-8 sequence: back up to the start of the character at `end`.
  while (end < bytes.length && end > fromByte && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  const chunk = bytes.subarray(fromByte, end).toString("utf8");
  return end < bytes.length ? `${chunk}\n[${end - fromByte} of ${bytes.length} bytes shown; continue with {"op":"read","fromByte":${end}}]` : chunk;
}

/** One line as shown: cut to MAX_LINE_CHARS, around `at` (a match) when given. */
function clip(line: string, at = 0): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const start = Math.max(0, Math.min(at - MAX_LINE_CHARS / 2, line.length - MAX_LINE_CHARS));
  return `${start > 0 ? "…" : ""}${line.slice(start, start + MAX_LINE_CHARS)}${start + MAX_LINE_CHARS < line.length ? `… [line of ${line.length} characters; op "read" pages within it]` : ""}`;
}

/** Lines `from`..`to` (1-based, inclusive), numbered, cut at a page size the model can take. */
function page(lines: string[], from: number, to: number): string {
  if (from > lines.length) return `The result has ${lines.length} lines; line ${from} is past the end.`;
  const out: string[] = [];
  let chars = 0;
  const last = Math.min(to, lines.length);
  for (let n = from; n <= last; n++) {
    const line = `${n}: ${clip(lines[n - 1] as string)}`;
    if (chars + line.length > MAX_PAGE_CHARS) {
      out.push(`[page cut at ${MAX_PAGE_CHARS} characters; continue with slice from ${n}]`);
      break;
    }
    out.push(line);
    chars += line.length + 1;
  }
  return out.join("\n");
}

function grep(lines: string[], pattern: string | undefined, context: number): string {
  if (!pattern) throw new BadRequestError('grep needs "pattern" (a regular expression).');
  try {
    new RegExp(pattern, "i");
  } catch (error) {
    throw new BadRequestError(`"pattern" is not a valid regular expression: ${(error as Error).message.slice(0, 200)}`);
  }
  const { matches, total } = matchIndexes(lines, pattern);
  const shown = `/${pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern}/i`;
  if (total === 0) return `No line matches ${shown} in ${lines.length} lines.`;
  const out = [`${total} matching line${total === 1 ? "" : "s"} of ${lines.length}:`];
  let chars = 0;
  let printed = -1;
  // Matches come in line order: the answer is built as they come and stops at the page size, so context costs nothing past it.
  for (const [i, at] of matches) {
    const first = Math.max(i - context, printed + 1);
    if (context > 0 && printed >= 0 && first > printed + 1) out.push("--");
    for (let j = first; j <= Math.min(lines.length - 1, i + context); j++) {
      const line = `${j + 1}: ${clip(lines[j] as string, j === i ? at : 0)}`;
      if (chars + line.length > MAX_PAGE_CHARS) {
        out.push(`[cut at ${MAX_PAGE_CHARS} characters; narrow the pattern or use slice]`);
        return out.join("\n");
      }
      out.push(line);
      chars += line.length + 1;
      printed = j;
    }
  }
  return out.join("\n");
}

/** `[line, match index]` of the first matching lines and how many match in all; matching runs under a time limit (vm interrupts a regular expression, the main loop cannot). */
function matchIndexes(lines: string[], pattern: string): { matches: Array<[number, number]>; total: number } {
  const source =
    "const re = new RegExp(pattern, 'i'); const matches = []; let total = 0; for (let i = 0; i < lines.length; i++) { const m = re.exec(lines[i]); if (m) { total++; if (matches.length < limit) matches.push([i, m.index]); } } ({ matches, total })";
  try {
    return runInNewContext(source, { pattern, lines, limit: MAX_GREP_MATCHES }, { timeout: GREP_TIMEOUT_MS }) as {
      matches: Array<[number, number]>;
      total: number;
    };
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
      throw new BadRequestError(
        `The pattern took longer than ${GREP_TIMEOUT_MS} ms to match over ${lines.length.toLocaleString("en-US")} lines; use a simpler or more specific pattern, or slice a part first.`,
      );
    }
    throw error;
  }
}
