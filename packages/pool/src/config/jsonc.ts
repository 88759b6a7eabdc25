import { ConfigError } from "../errors";

/** JSON with comments and trailing commas (VS Code's `.vscode/mcp.json`), read as plain JSON. */
export interface JsoncText {
  /** The text with comments and trailing commas blanked: every other character keeps its line and column. */
  text: string;
  /** Whether the text had comments (a rewrite of the file would lose them). */
  comments: boolean;
  /** The first syntax error, by offset and in words that quote nothing from the file. */
  error?: { offset: number; line: number; column: number; message: string; empty?: boolean };
}

/**
 * Parses a JSON or JSONC file's text (a BOM, comments and trailing commas are accepted); a syntax error is a
 * ConfigError naming the file, line and column. `empty` is the value of a file that holds only blanks and comments.
 * @example const { value, comments } = parseJsonc(text, ".vscode/mcp.json");
 */
export function parseJsonc(text: string, file: string, options: { empty?: unknown } = {}): { value: unknown; comments: boolean } {
  const plain = stripJsonComments(text.replace(/^\uFEFF/, ""));
  if (plain.error && !(plain.error.empty && "empty" in options)) {
    const { line, column, message } = plain.error;
    throw new ConfigError(`Invalid config ${file}: JSON syntax error at line ${line}, column ${column}: ${message}.`, { file });
  }
  return { value: plain.error ? options.empty : JSON.parse(plain.text), comments: plain.comments };
}

type Expect = "value" | "first-value" | "key" | "first-key" | "colon" | "after" | "end";

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const LITERAL_CHAR = /[A-Za-z0-9+\-.]/;
const LITERAL = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)$/;
const ESCAPE = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX4 = /^[0-9A-Fa-f]{4}$/;

/**
 * Checks JSONC in one linear pass with an explicit stack (V8's own messages lack the position of some errors
 * and quote the file, which may hold secrets), and blanks comments and trailing commas for `JSON.parse`.
 */
export function stripJsonComments(source: string): JsoncText {
  // Ranges to blank, as [start, end); a trailing comma is found after the comments that follow it, so they are sorted at the end.
  const blanks: [number, number][] = [];
  const stack: string[] = [];
  let expect: Expect = "value";
  let comments = false;
  let pendingComma = -1;
  let i = 0;
  const problem = (offset: number, message: string): JsoncText => ({ text: source, comments, error: { offset, ...lineColumn(source, offset), message } });
  const closed = (): Expect => (stack.length ? "after" : "end");

  while (i < source.length) {
    const c = source[i]!;
    if (WHITESPACE.has(c)) {
      i += 1;
      continue;
    }
    if (c === "/" && (source[i + 1] === "/" || source[i + 1] === "*")) {
      comments = true;
      const line = source[i + 1] === "/";
      const end = line ? source.indexOf("\n", i) : source.indexOf("*/", i + 2);
      if (!line && end < 0) return problem(i, "a /* comment is never closed");
      const stop = end < 0 ? source.length : line ? end : end + 2;
      blanks.push([i, stop]);
      i = stop;
      continue;
    }
    if (c === "}" || c === "]") {
      const open = c === "}" ? "{" : "[";
      const trailing = pendingComma >= 0 && (c === "}" ? expect === "key" : expect === "value");
      const empty = c === "}" ? expect === "first-key" : expect === "first-value";
      if (stack.at(-1) !== open || !(expect === "after" || trailing || empty)) return problem(i, unexpected(expect, stack.at(-1), c));
      if (trailing) blanks.push([pendingComma, pendingComma + 1]);
      pendingComma = -1;
      stack.pop();
      expect = closed();
      i += 1;
      continue;
    }
    pendingComma = -1;
    if (c === ",") {
      if (expect !== "after" || !stack.length) return problem(i, unexpected(expect, stack.at(-1), c));
      pendingComma = i;
      expect = stack.at(-1) === "{" ? "key" : "value";
      i += 1;
    } else if (c === ":") {
      if (expect !== "colon") return problem(i, unexpected(expect, stack.at(-1), c));
      expect = "value";
      i += 1;
    } else if (c === '"') {
      if (expect === "colon" || expect === "after" || expect === "end") return problem(i, unexpected(expect, stack.at(-1), c));
      const end = stringEnd(source, i);
      if (typeof end !== "number") return problem(end.offset, end.message);
      expect = expect === "key" || expect === "first-key" ? "colon" : closed();
      i = end;
    } else if (c === "{" || c === "[") {
      if (expect !== "value" && expect !== "first-value") return problem(i, unexpected(expect, stack.at(-1), c));
      stack.push(c);
      expect = c === "{" ? "first-key" : "first-value";
      i += 1;
    } else if (LITERAL_CHAR.test(c) && (expect === "value" || expect === "first-value")) {
      let end = i + 1;
      while (end < source.length && LITERAL_CHAR.test(source[end]!)) end += 1;
      if (!LITERAL.test(source.slice(i, end)))
        return problem(i, "expected a value: a string in double quotes, a number, true, false, null, an object or an array");
      expect = closed();
      i = end;
    } else {
      return problem(i, c === "'" ? "strings and names take double quotes, not single ones" : unexpected(expect, stack.at(-1), c));
    }
  }
  if (expect === "value" && !stack.length)
    return { text: source, comments, error: { offset: 0, line: 1, column: 1, message: "the file holds no JSON value", empty: true } };
  if (expect !== "end") return problem(source.length, "the file ends before the JSON does (a bracket or brace is not closed, or a value is missing)");
  return { text: blank(source, blanks), comments };
}

/** `source` with each range replaced by spaces, line breaks kept. */
function blank(source: string, ranges: [number, number][]): string {
  if (!ranges.length) return source;
  ranges.sort((a, b) => a[0] - b[0]);
  const parts: string[] = [];
  let copied = 0;
  for (const [start, end] of ranges) {
    parts.push(source.slice(copied, start), source.slice(start, end).replace(/[^\n]/g, " "));
    copied = end;
  }
  parts.push(source.slice(copied));
  return parts.join("");
}

/** The offset after the closing quote of the string starting at `start`, or why it is not a JSON string. */
function stringEnd(source: string, start: number): number | { offset: number; message: string } {
  let j = start + 1;
  while (j < source.length) {
    const c = source[j]!;
    if (c === '"') return j + 1;
    if (c === "\\") {
      const next = source[j + 1] ?? "";
      if (next === "u" ? !HEX4.test(source.slice(j + 2, j + 6)) : !ESCAPE.has(next)) return { offset: j, message: "a string holds an invalid \\ escape" };
      j += next === "u" ? 6 : 2;
    } else if (c < " ") {
      return {
        offset: j,
        message: c === "\n" ? "a string is not closed before the end of its line" : "a string holds a control character (write it as an escape)",
      };
    } else {
      j += 1;
    }
  }
  return { offset: start, message: "a string is never closed" };
}

/** What was expected where `found` stands, in words. */
function unexpected(expect: Expect, open: string | undefined, found: string): string {
  const what = found === "," || found === ":" || found === "}" || found === "]" ? `"${found}"` : "this";
  switch (expect) {
    case "key":
    case "first-key":
      return `expected a property name in double quotes${expect === "first-key" ? ' or "}"' : ""}, found ${what}`;
    case "colon":
      return `expected ":" after the property name, found ${what}`;
    case "after":
      return `expected "," or "${open === "{" ? "}" : "]"}" after a value, found ${what}`;
    case "end":
      return `expected the end of the file after the top-level value, found ${what}`;
    default:
      return `expected a value${expect === "first-value" ? ' or "]"' : ""}, found ${what}`;
  }
}

function lineColumn(source: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf("\n"); i >= 0 && i < offset; i = source.indexOf("\n", i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
