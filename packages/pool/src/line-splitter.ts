export interface LineSplitterOptions {
  /** A longer line is dropped (reported through onOversize) and reading resumes at the next newline. */
  maxLineBytes: number;
  onLine: (line: string) => void;
  onOversize?: (bytes: number) => void;
}

/** Splits a byte stream into lines without re-copying a long line on every chunk. */
export class LineSplitter {
  #chunks: Buffer[] = [];
  #pending = 0;
  #skipping = false;

  constructor(readonly options: LineSplitterOptions) {}

  push(chunk: Buffer): void {
    let start = 0;
    let newline = chunk.indexOf(10);
    while (newline !== -1) {
      const piece = chunk.subarray(start, newline);
      if (this.#skipping) {
        this.#skipping = false;
      } else {
        const line = this.#chunks.length ? Buffer.concat([...this.#chunks, piece]).toString("utf8") : piece.toString("utf8");
        this.#chunks = [];
        this.#pending = 0;
        this.options.onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
      }
      start = newline + 1;
      newline = chunk.indexOf(10, start);
    }
    if (start < chunk.length && !this.#skipping) {
      this.#chunks.push(chunk.subarray(start));
      this.#pending += chunk.length - start;
      if (this.#pending > this.options.maxLineBytes) {
        this.options.onOversize?.(this.#pending);
        this.#chunks = [];
        this.#pending = 0;
        this.#skipping = true;
      }
    }
  }

  clear(): void {
    this.#chunks = [];
    this.#pending = 0;
    this.#skipping = false;
  }
}
