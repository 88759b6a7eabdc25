import { formatBytes } from "./output-buffer.js";
import type { RuntimeError } from "./runtime.js";
import type { BundlePositions } from "./source-map.js";
import type { SandboxErrorInfo } from "./types.js";

export interface ErrorContext {
  filename: string;
  timeoutMs: number;
  memoryLimitBytes: number;
  /** Built only when an error needs mapping; parsing the source map costs more than the run. */
  positions: () => BundlePositions;
}

/** Turns an engine error into what the caller sees: kind, a sentence with `file:line:col`, and the mapped stack. */
export function toErrorInfo(error: RuntimeError, context: ErrorContext): SandboxErrorInfo {
  const mapped = error.stack ? context.positions().frames(error.stack) : { stack: "", positions: [] };
  const top = mapped.positions[0];
  const inSnippet = mapped.positions.find((position) => position.file === context.filename);
  const where = top ? `${top.file}:${top.line}:${top.column}` : context.filename;
  const info: SandboxErrorInfo = { kind: error.kind, message: `${where}: ${sentence(error, context)}` };
  if (inSnippet) {
    info.line = inSnippet.line;
    info.column = inSnippet.column;
  }
  if (mapped.stack) info.stack = mapped.stack;
  return info;
}

function sentence(error: RuntimeError, context: ErrorContext): string {
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
    default:
      return error.name ? `${error.name}: ${error.message}` : error.message;
  }
}
