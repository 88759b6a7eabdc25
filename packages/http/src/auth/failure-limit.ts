import { TokenBuckets, type BucketRate } from "@codemux/core";
import { createHash } from "node:crypto";

/** Failed tokens one client address may present: 10 at once, then one every 90 s (10 per 15 minutes). */
const FAILURES: BucketRate = { capacity: 10, calls: 10, perMs: 15 * 60_000 };
/** Failed tokens remembered (address and digest), for all addresses together, at most; the least recently seen go first. */
const MAX_REMEMBERED = 10_000;

/**
 * Slows token guessing on every route: each client address has a bucket of failed tokens (bearer
 * tokens on MCP, REST, /metrics, /readyz and the SSE routes, and the admin page's sign-in form
 * alike), and an empty bucket refuses the address's next token before it is looked at, the right
 * one included. A token that already failed from that address is not counted again: a client
 * retrying its one stale token is not guessing, and must not lock out everyone behind its NAT.
 * Kept in memory per instance; bounded in size (the least recently used go first).
 */
export class FailureLimit {
  readonly #failures = new TokenBuckets();
  readonly #seen = new Set<string>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** How long (ms) `address` must wait before it may present a token again; 0 when it may now. */
  waitMs(address: string): number {
    return this.#failures.check(address, FAILURES, this.#now()).waitMs;
  }

  /** Counts one failed `token` of `address`, unless that address failed with that token before. */
  failed(address: string, token: string): void {
    const key = `${address}\u0000${createHash("sha256").update(token).digest("base64")}`;
    const known = this.#seen.delete(key);
    this.#seen.add(key);
    for (const old of this.#seen) {
      if (this.#seen.size <= MAX_REMEMBERED) break;
      this.#seen.delete(old);
    }
    if (known) return;
    const now = this.#now();
    this.#failures.take(address, this.#failures.check(address, FAILURES, now).tokens, now);
  }
}
