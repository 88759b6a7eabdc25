import { STDERR_LINE_LENGTH, STDERR_LINES } from "./defaults";

/**
 * A line that states an error, from the start of the line: `TypeError: ...`, `Error [ERR_X]: ...`,
 * `ModuleNotFoundError: ...`, `error: ...`, `error[E0425]: ...`, `npm error ...`, `fatal: ...`, `panic: ...`.
 * Stack frames are indented and never match.
 */
const ERROR_LINE = /^(?:Uncaught )?(?:[A-Za-z][\w.$]*)?(?:Error|Exception)(?: \[[\w-]+\])?: \S|^(?:error|fatal|panic)(?:\[\w+\])?: \S|^npm (?:error|ERR!) \S/i;

/** Keeps the last lines a server wrote to stderr, for diagnostics, in bounded memory. */
export class StderrRing {
  readonly #lines: string[] = [];
  #partial = "";

  constructor(
    readonly maxLines = STDERR_LINES,
    readonly maxLineLength = STDERR_LINE_LENGTH,
  ) {}

  push(chunk: string): void {
    const parts = (this.#partial + chunk).split(/\r?\n/);
    this.#partial = (parts.pop() ?? "").slice(0, this.maxLineLength);
    for (const line of parts) this.#add(line);
  }

  /** Forgets every line: a process started again to replace one that never served tells its own story. */
  clear(): void {
    this.#lines.length = 0;
    this.#partial = "";
  }

  /** The last `count` lines, including an unterminated last line. */
  tail(count = 10): string[] {
    const lines = this.#partial ? [...this.#lines, this.#partial] : [...this.#lines];
    return lines.slice(-count);
  }

  /**
   * The lines that say what went wrong: the start (two lines at most) of the last run of error lines
   * (`Error: Cannot find module '/x.js'`, `npm error 404 Not Found ...`), not the stack frames and
   * version banner after it; the last `count` lines when no line looks like an error.
   */
  telling(count = 5): string[] {
    const lines = this.tail(this.maxLines + 1);
    let last = lines.length - 1;
    while (last >= 0 && !ERROR_LINE.test(lines[last] as string)) last--;
    if (last < 0) return lines.slice(-count);
    let first = last;
    while (first > 0 && ERROR_LINE.test(lines[first - 1] as string)) first--;
    return lines.slice(first, Math.min(last + 1, first + Math.min(2, count)));
  }

  #add(line: string): void {
    if (!line.trim()) return;
    this.#lines.push(line.length > this.maxLineLength ? `${line.slice(0, this.maxLineLength)}…` : line);
    if (this.#lines.length > this.maxLines) this.#lines.shift();
  }
}
