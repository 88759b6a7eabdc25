import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ResultNotFoundError } from "./errors";

export interface KeptResult {
  handle: string;
  tool: string;
  bytes: number;
  lines: number;
  createdAt: number;
  expiresAt: number;
}

export interface ResultStoreOptions {
  /** How long a kept result stays readable. */
  ttlMs?: number;
  /** Total bytes kept; the oldest results go first past this. */
  maxBytes?: number;
  /** Where results are written; a private temporary folder by default. */
  dir?: string;
  now?: () => number;
}

/**
 * Keeps tool results too large to put in the model's context, so that read_result can page
 * through them. They are written to files (only their metadata stays in memory, so the proxy's
 * memory stays flat however much it keeps), bounded in time and total size, and deleted when
 * they expire and when the store is cleared.
 */
export class ResultStore {
  readonly #results = new Map<string, KeptResult>();
  readonly #ttlMs: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #dirOption: string | undefined;
  #dir: string | undefined;
  #bytes = 0;

  constructor(options: ResultStoreOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 30 * 60_000;
    this.#maxBytes = options.maxBytes ?? 1024 * 1024 * 1024;
    this.#now = options.now ?? Date.now;
    this.#dirOption = options.dir;
  }

  get size(): number {
    this.#expire();
    return this.#results.size;
  }

  keep(tool: string, text: string): KeptResult {
    this.#expire();
    const now = this.#now();
    const kept: KeptResult = {
      handle: `res_${randomBytes(6).toString("hex")}`,
      tool,
      bytes: Buffer.byteLength(text),
      lines: countLines(text),
      createdAt: now,
      expiresAt: now + this.#ttlMs,
    };
    writeFileSync(this.#path(kept.handle), text, { mode: 0o600 });
    this.#results.set(kept.handle, kept);
    this.#bytes += kept.bytes;
    for (const [handle, old] of this.#results) {
      if (this.#bytes <= this.#maxBytes || handle === kept.handle) break;
      this.#delete(handle, old);
    }
    return kept;
  }

  get(handle: string): KeptResult {
    this.#expire();
    const kept = this.#results.get(handle);
    if (!kept) throw new ResultNotFoundError(handle);
    return kept;
  }

  /** The kept text; the handle is checked first, so it cannot name a file of its own. */
  read(handle: string): string {
    const kept = this.get(handle);
    return readFileSync(this.#path(kept.handle), "utf8");
  }

  clear(): void {
    this.#results.clear();
    this.#bytes = 0;
    if (this.#dir && !this.#dirOption) rmSync(this.#dir, { recursive: true, force: true });
    else for (const handle of this.#results.keys()) this.#unlink(handle);
    this.#dir = undefined;
  }

  #path(handle: string): string {
    if (!this.#dir) {
      if (this.#dirOption) mkdirSync(this.#dirOption, { recursive: true, mode: 0o700 });
      this.#dir = this.#dirOption ?? mkdtempSync(join(tmpdir(), "codemux-results-"));
    }
    return join(this.#dir, `${handle}.txt`);
  }

  #expire(): void {
    const now = this.#now();
    for (const [handle, kept] of this.#results) if (kept.expiresAt <= now) this.#delete(handle, kept);
  }

  #delete(handle: string, kept: KeptResult): void {
    this.#results.delete(handle);
    this.#bytes -= kept.bytes;
    this.#unlink(handle);
  }

  #unlink(handle: string): void {
    try {
      unlinkSync(this.#path(handle));
    } catch {
      // Already gone: nothing to free.
    }
  }
}

function countLines(text: string): number {
  if (!text) return 0;
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  return text.endsWith("\n") ? lines - 1 : lines;
}

/** A rough token estimate (4 characters a token) for sizes shown to the model. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
