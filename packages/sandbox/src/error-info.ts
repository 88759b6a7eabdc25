import { MAX_ERROR_MESSAGE_LENGTH } from "./defaults.js";
import { formatBytes } from "./output-buffer.js";
import type { RuntimeError } from "./runtime.js";
import type { SourcePosition, StackPositions } from "./source-map.js";
import type { SandboxErrorInfo } from "./types.js";

export interface ErrorContext {
  filename: string;
  /** The snippet as written, to name the value in "not a function" errors. */
  code: string;
  timeoutMs: number;
  memoryLimitBytes: number;
  /** Built only when an error needs mapping; parsing the source map costs more than the run. */
  positions: () => StackPositions;
}

/**
 * Turns an engine error into what the caller sees: kind, a sentence with `file:line:col`, and the
 * mapped stack. The place is the snippet's own line that led to the error (the first frame in the
 * snippet), even when the error was thrown inside an imported module; that module's frame is named too.
 */
export function toErrorInfo(error: RuntimeError, context: ErrorContext): SandboxErrorInfo {
  const mapped = error.stack ? context.positions().frames(error.stack) : { stack: "", positions: [] };
  const top = mapped.positions[0];
  const inSnippet = mapped.positions.find((position) => position.file === context.filename);
  const place = inSnippet ?? top;
  const where = place ? at(place) : context.filename;
  const thrownElsewhere = top && inSnippet && top !== inSnippet ? ` (thrown at ${at(top)})` : "";
  const info: SandboxErrorInfo = { kind: error.kind, message: `${where}: ${sentence(error, context, top)}${thrownElsewhere}` };
  if (inSnippet) {
    info.line = inSnippet.line;
    info.column = inSnippet.column;
  }
  if (mapped.stack) info.stack = mapped.stack;
  return info;
}

function at(position: SourcePosition): string {
  return `${position.file}:${position.line}:${position.column}`;
}

function sentence(error: RuntimeError, context: ErrorContext, top: SourcePosition | undefined): string {
  switch (error.kind) {
    case "timeout":
      // "interrupted" is QuickJS's own word for a stop by the interrupt handler.
      return error.message === "interrupted" ? `The snippet ran past its ${context.timeoutMs} ms deadline and was stopped.` : error.message;
    case "aborted":
      return "The run was cancelled.";
    case "memory":
      return `The snippet ran out of memory (limit ${formatBytes(context.memoryLimitBytes)}).`;
    case "stack_overflow":
      return "Stack overflow: the recursion is too deep.";
    default: {
      // The runtime already cut it (and said so); this bounds a runtime that did not.
      const limit = MAX_ERROR_MESSAGE_LENGTH + 100;
      const message = error.message.length > limit ? `${error.message.slice(0, limit)}…` : error.message;
      const named = error.name === "TypeError" && message === "not a function" && top?.file === context.filename ? notAFunction(context.code, top) : undefined;
      const text = named ?? message;
      return error.name ? `${error.name}: ${text}` : text;
    }
  }
}

/** QuickJS says only "not a function"; the callee is the expression just before the call's position. */
function notAFunction(code: string, position: SourcePosition): string | undefined {
  let lineStart = 0;
  for (let line = 1; line < position.line; line++) {
    const next = code.indexOf("\n", lineStart);
    if (next === -1) return undefined;
    lineStart = next + 1;
  }
  // The column points at the call's parenthesis (or just after the callee); read back a short dotted name.
  let end = Math.min(code.length, lineStart + position.column - 1);
  while (end > lineStart && (code[end] === "(" || code[end] === " ") && !isNamePart(code[end - 1] ?? "")) end--;
  let start = end;
  while (start > lineStart && end - start < 120 && (isNamePart(code[start - 1] ?? "") || code[start - 1] === "." || code[start - 1] === "?")) start--;
  const callee = code.slice(start, end).replace(/^[.?]+/, "");
  return callee && /[A-Za-z_$]/.test(callee) ? `${callee} is not a function` : undefined;
}

function isNamePart(char: string): boolean {
  return /[\w$]/.test(char);
}
