import { createReadStream, createWriteStream } from "node:fs";
import { appendFile, mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, extname } from "node:path";
import { createInterface } from "node:readline";
import { finished } from "node:stream/promises";

export interface RotatingFileOptions {
  file: string;
  /** Size at which the file is rotated. */
  maxBytes: number;
  /** Files kept in all, the current one included (`audit.jsonl`, `audit.1.jsonl`, ...). */
  files: number;
}

/**
 * Appends lines to a file that rotates by size, keeping N files. Lines are queued and written in
 * batches by one writer, so a call never waits for the disk and lines never interleave.
 */
export class RotatingFile {
  readonly #options: RotatingFileOptions;
  #queue: string[] = [];
  #writing: Promise<void> | undefined;
  #size: number | undefined;
  #failed = false;
  onError: (error: unknown) => void = () => undefined;

  constructor(options: RotatingFileOptions) {
    this.#options = options;
  }

  /** The path of the n-th older file (0: the current one). */
  path(n: number): string {
    if (n === 0) return this.#options.file;
    const ext = extname(this.#options.file);
    return `${this.#options.file.slice(0, this.#options.file.length - ext.length)}.${n}${ext}`;
  }

  append(line: string): void {
    this.#queue.push(line.endsWith("\n") ? line : `${line}\n`);
    // A full queue means the disk is stuck: drop rather than grow without bound.
    if (this.#queue.length > 100_000) this.#queue.splice(0, this.#queue.length - 100_000);
    this.#writing ??= this.#drain();
  }

  /** Resolves once every line appended so far is on disk. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /**
   * Rewrites every kept file without the lines `drop` matches (a principal forgotten, lines past their
   * retention), streaming line by line; appends wait meanwhile and follow. Resolves with the lines dropped.
   */
  async filter(drop: (line: string) => boolean): Promise<number> {
    while (this.#writing) await this.#writing;
    const run = this.#filterFiles(drop);
    // Appends made meanwhile queue behind this run (the writer is taken), then drain.
    this.#writing = run.then(
      () => this.#resume(),
      () => this.#resume(),
    );
    return run;
  }

  #resume(): void {
    this.#writing = undefined;
    this.#size = undefined;
    if (this.#queue.length) this.#writing = this.#drain();
  }

  async #filterFiles(drop: (line: string) => boolean): Promise<number> {
    let dropped = 0;
    for (let n = 0; n < Math.max(1, this.#options.files); n++) {
      const file = this.path(n);
      const temporary = `${file}.${process.pid}.filter.tmp`;
      const input = createReadStream(file, { encoding: "utf8" });
      const output = createWriteStream(temporary, { mode: 0o600 });
      let droppedHere = 0;
      try {
        for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
          if (line && drop(line)) droppedHere++;
          else if (line && !output.write(`${line}\n`)) await new Promise<void>((r) => output.once("drain", () => r()));
        }
        output.end();
        await finished(output);
      } catch (error) {
        output.destroy();
        await rm(temporary, { force: true });
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw error;
      }
      if (droppedHere > 0) await rename(temporary, file);
      else await rm(temporary, { force: true });
      dropped += droppedHere;
    }
    return dropped;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length) {
        const batch = this.#queue.splice(0);
        try {
          await this.#write(batch);
          this.#failed = false;
        } catch (error) {
          // One report per run of failures, not one per line.
          if (!this.#failed) this.onError(error);
          this.#failed = true;
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #write(lines: string[]): Promise<void> {
    if (this.#size === undefined) {
      await mkdir(dirname(this.#options.file), { recursive: true, mode: 0o700 });
      this.#size = await stat(this.#options.file).then(
        (s) => s.size,
        () => 0,
      );
    }
    let chunk = "";
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      if (this.#size + Buffer.byteLength(chunk) + bytes > this.#options.maxBytes && this.#size + chunk.length > 0) {
        if (chunk) await appendFile(this.#options.file, chunk, { mode: 0o600 });
        chunk = "";
        await this.#rotate();
      }
      chunk += line;
    }
    if (chunk) {
      await appendFile(this.#options.file, chunk, { mode: 0o600 });
      this.#size += Buffer.byteLength(chunk);
    }
  }

  async #rotate(): Promise<void> {
    const keep = Math.max(1, this.#options.files);
    await rm(this.path(keep - 1), { force: true });
    for (let n = keep - 2; n >= 0; n--) {
      await rename(this.path(n), this.path(n + 1)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    }
    if (keep === 1) await rm(this.path(0), { force: true });
    this.#size = 0;
  }
}
