import { randomBytes } from "node:crypto";
import { ResultNotFoundError } from "./errors";

export interface KeptResult {
  handle: string;
  tool: string;
  text: string;
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
  now?: () => number;
}

/**
 * Keeps tool results too large to put in the model's context, so that read_result can page
 * through them. Bounded in time and total size; expired results are deleted.
 */
export class ResultStore {
  readonly #results = new Map<string, KeptResult>();
  readonly #ttlMs: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  #bytes = 0;

  constructor(options: ResultStoreOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 30 * 60_000;
    this.#maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    this.#now = options.now ?? Date.now;
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
      text,
      bytes: Buffer.byteLength(text),
      lines: countLines(text),
      createdAt: now,
      expiresAt: now + this.#ttlMs,
    };
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

  clear(): void {
    this.#results.clear();
    this.#bytes = 0;
  }

  #expire(): void {
    const now = this.#now();
    for (const [handle, kept] of this.#results) if (kept.expiresAt <= now) this.#delete(handle, kept);
  }

  #delete(handle: string, kept: KeptResult): void {
    this.#results.delete(handle);
    this.#bytes -= kept.bytes;
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
