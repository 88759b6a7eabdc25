/** One bucket's shape: `calls` per `perMs`, up to `capacity` at once. */
export interface BucketRate {
  capacity: number;
  calls: number;
  perMs: number;
}

/** One bucket asked for in a `RateBuckets.take`. */
export interface BucketRequest {
  key: string;
  rate: BucketRate;
}

/**
 * Token buckets behind one seam: in memory (`TokenBuckets`) or shared by several instances (Redis),
 * where one `takeAll` is atomic, so N instances together let through no more than the limit.
 */
export interface RateBuckets {
  /** Spends one token of every bucket when each holds one at `now`; otherwise spends none and names the one to wait longest for. */
  takeAll(requests: BucketRequest[], now: number): { refused?: number; waitMs: number } | Promise<{ refused?: number; waitMs: number }>;
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
export class TokenBuckets implements RateBuckets {
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

  takeAll(requests: BucketRequest[], now: number): { refused?: number; waitMs: number } {
    const checks = requests.map((r) => this.check(r.key, r.rate, now));
    let refused: number | undefined;
    checks.forEach((c, i) => {
      if (c.waitMs > 0 && (refused === undefined || c.waitMs > (checks[refused]?.waitMs ?? 0))) refused = i;
    });
    if (refused !== undefined) return { refused, waitMs: checks[refused]?.waitMs ?? 0 };
    requests.forEach((r, i) => this.take(r.key, checks[i]?.tokens ?? 0, now));
    return { waitMs: 0 };
  }
}
