import { STDERR_LINE_LENGTH, STDERR_LINES } from "./defaults";

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

  /** The last `count` lines, including an unterminated last line. */
  tail(count = 10): string[] {
    const lines = this.#partial ? [...this.#lines, this.#partial] : [...this.#lines];
    return lines.slice(-count);
  }

  #add(line: string): void {
    if (!line.trim()) return;
    this.#lines.push(line.length > this.maxLineLength ? `${line.slice(0, this.maxLineLength)}…` : line);
    if (this.#lines.length > this.maxLines) this.#lines.shift();
  }
}
