import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { runInNewContext } from "node:vm";
import { BadRequestError } from "../errors";
import { estimateTokens, type KeptResult, type ResultStore } from "../results";

const PREVIEW_LINES = 40;
const PREVIEW_CHARS = 2000;
const MAX_PAGE_CHARS = 24_000;

const MAX_LINE_CHARS = 1000;
const MAX_CONTEXT = 20;
/** A pattern that backtracks catastrophically (`(x+x+)+y`) would block the event loop of every session. */
const GREP_TIMEOUT_MS = 1000;

/** The text of a result's text parts (and structuredContent when there is no text), in lines worth paging. */
function resultText(result: CallToolResult): string {
  const texts = (result.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : []));
  if (texts.length) return pageable(texts.join("\n"));
  return result.structuredContent ? JSON.stringify(result.structuredContent, null, 1) : "";
}

/** JSON on one long line is laid out one value a line, so that slice and grep find something to show. */
function pageable(text: string): string {
  if (text.length < MAX_LINE_CHARS || text.indexOf("\n") !== -1) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 1);
  } catch {
    return text;
  }
}

/** One line as shown: cut to MAX_LINE_CHARS, around `at` (a match) when given. */
function clip(line: string, at = 0): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const start = Math.max(0, Math.min(at - MAX_LINE_CHARS / 2, line.length - MAX_LINE_CHARS));
  return `${start > 0 ? "…" : ""}${line.slice(start, start + MAX_LINE_CHARS)}${start + MAX_LINE_CHARS < line.length ? `… [line of ${line.length} characters]` : ""}`;
}

/** A result over `limitBytes` is kept and replaced by a preview with its size and a handle for read_result. */
export function limitResult(tool: string, result: CallToolResult, store: ResultStore, limitBytes: number): CallToolResult {
  const size = Buffer.byteLength(JSON.stringify(result));
  if (size <= limitBytes) return result;
  const text = resultText(result);
  if (!text) return result;
  const kept = store.keep(tool, text);
  const preview = previewOf(text);
  return {
    content: [
      {
        type: "text",
        text: [
          `The result of ${tool} is ${formatBytes(kept.bytes)} (~${estimateTokens(text).toLocaleString("en-US")} tokens, ${kept.lines.toLocaleString("en-US")} lines), too large to show whole. It is kept as "${kept.handle}" for ${Math.round((kept.expiresAt - kept.createdAt) / 60_000)} minutes.`,
          `Read it with read_result {"handle":"${kept.handle}","op":"grep","pattern":"..."} (ops: stat, head, tail, slice, grep), or process the data inside execute_code, where tools return the full value.`,
          `--- preview: ${preview.description} ---`,
          preview.text,
        ].join("\n"),
      },
    ],
    ...(result.isError ? { isError: true } : {}),
  };
}

function previewOf(text: string): { text: string; description: string } {
  const lines = text.split("\n");
  let out = lines.slice(0, PREVIEW_LINES).join("\n");
  if (out.length > PREVIEW_CHARS) out = out.slice(0, PREVIEW_CHARS);
  const shownLines = out.split("\n").length;
  return { text: out, description: shownLines >= lines.length ? `first ${out.length} characters` : `first ${shownLines} lines` };
}

export interface ReadResultRequest {
  handle: string;
  op: "stat" | "head" | "tail" | "slice" | "grep";
  lines?: number;
  from?: number;
  to?: number;
  pattern?: string;
  context?: number;
}

export function readResult(store: ResultStore, request: ReadResultRequest): string {
  const kept = store.get(request.handle);
  const text = store.read(kept.handle);
  const lines = text.split("\n");
  switch (request.op) {
    case "stat":
      return stat(kept, text);
    case "head":
      return page(lines, 1, request.lines ?? 50);
    case "tail": {
      const count = request.lines ?? 50;
      return page(lines, Math.max(1, lines.length - count + 1), lines.length);
    }
    case "slice": {
      if (request.from === undefined) throw new BadRequestError('slice needs "from" (first line, 1-based) and optionally "to".');
      return page(lines, request.from, request.to ?? request.from + 49);
    }
    case "grep":
      return grep(lines, request.pattern, request.context ?? 0);
  }
}

function stat(kept: KeptResult, text: string): string {
  return JSON.stringify({ handle: kept.handle, tool: kept.tool, bytes: kept.bytes, lines: kept.lines, estimatedTokens: estimateTokens(text), expiresAt: new Date(kept.expiresAt).toISOString() });
}

/** Lines `from`..`to` (1-based, inclusive), numbered, cut at a page size the model can take. */
function page(lines: string[], from: number, to: number): string {
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
  if (from > lines.length) return `The result has ${lines.length} lines; line ${from} is past the end.`;
  return out.join("\n");
}

function grep(lines: string[], pattern: string | undefined, requestedContext: number): string {
  if (!pattern) throw new BadRequestError('grep needs "pattern" (a regular expression).');
  try {
    new RegExp(pattern, "i");
  } catch (error) {
    throw new BadRequestError(`"pattern" is not a valid regular expression: ${(error as Error).message}`);
  }
  const context = Math.min(requestedContext, MAX_CONTEXT);
  const show = new Set<number>();
  let matches = 0;
  const where = new Map<number, number>();
  for (const [i, index] of matchIndexes(lines, pattern)) {
    where.set(i, index);
    matches++;
    for (let j = Math.max(0, i - context); j <= Math.min(lines.length - 1, i + context); j++) show.add(j);
  }
  if (matches === 0) return `No line matches /${pattern}/i in ${lines.length} lines.`;
  const out = [`${matches} matching line${matches === 1 ? "" : "s"} of ${lines.length}:`];
  let previous = -2;
  let chars = 0;
  for (const i of [...show].sort((a, b) => a - b)) {
    if (i !== previous + 1 && previous >= 0) out.push("--");
    const line = `${i + 1}: ${clip(lines[i] as string, where.get(i) ?? 0)}`;
    if (chars + line.length > MAX_PAGE_CHARS) {
      out.push(`[cut at ${MAX_PAGE_CHARS} characters; narrow the pattern or use slice]`);
      break;
    }
    out.push(line);
    chars += line.length + 1;
    previous = i;
  }
  return out.join("\n");
}

/** `[line, match index]` of every matching line; matching runs under a time limit (vm interrupts a regular expression, the main loop cannot). */
function matchIndexes(lines: string[], pattern: string): Array<[number, number]> {
  const source = "const re = new RegExp(pattern, 'i'); const out = []; for (let i = 0; i < lines.length; i++) { const m = re.exec(lines[i]); if (m) out.push([i, m.index]); } out";
  try {
    return runInNewContext(source, { pattern, lines }, { timeout: GREP_TIMEOUT_MS }) as Array<[number, number]>;
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
      throw new BadRequestError(`The pattern /${pattern}/ took longer than ${GREP_TIMEOUT_MS} ms to match (it backtracks too much); use a simpler pattern.`);
    }
    throw error;
  }
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${Math.round(bytes / 1024)} KB`;
}
