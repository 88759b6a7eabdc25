/** One bucket's shape: `calls` per `perMs`, up to `capacity` at once. */
export interface BucketRate {
  capacity: number;
  calls: number;
  perMs: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Buckets kept at most; the least recently used go first, and a forgotten bucket starts full again. */
const MAX_BUCKETS = 10_000;

/**
 * Token buckets by key (the rate-limit plugin's per principal, server or tool; a policy's per principal):
 * `check` says how long until a call may pass, `take` spends one token. Bounded in number.
 */
export class TokenBuckets {
  readonly #buckets = new Map<string, Bucket>();

  /** The tokens `key` holds at `now`, and how long (ms) until it holds one; 0 when a call may pass now. */
  check(key: string, rate: BucketRate, now: number): { tokens: number; waitMs: number } {
    const perMsRate = rate.calls / rate.perMs;
    const bucket = this.#buckets.get(key) ?? { tokens: rate.capacity, updatedAt: now };
    const tokens = Math.min(rate.capacity, bucket.tokens + Math.max(0, now - bucket.updatedAt) * perMsRate);
    return { tokens, waitMs: tokens >= 1 ? 0 : Math.ceil((1 - tokens) / perMsRate) };
  }

  /** Spends one of the `tokens` that `check` found at `now`. */
  take(key: string, tokens: number, now: number): void {
    this.#buckets.delete(key);
    this.#buckets.set(key, { tokens: tokens - 1, updatedAt: now });
    for (const old of this.#buckets.keys()) {
      if (this.#buckets.size <= MAX_BUCKETS) break;
      this.#buckets.delete(old);
    }
  }
}
