import { TokenBuckets, type BucketRate } from "@codemux/core";

/** Why a sign-in was refused: the label of `codemux_ui_sign_ins_refused_total`. */
export type SignInRefusal = "bad_token" | "not_admin" | "too_many";

/** Failed sign-ins one client address may make: 10 at once, then one every 90 s (10 per 15 minutes). */
const FAILURES: BucketRate = { capacity: 10, calls: 10, perMs: 15 * 60_000 };

/**
 * Slows token guessing at the sign-in form: each client address has a bucket of failures, and an empty
 * bucket refuses the next sign-in before its token is looked at. Kept in memory per instance; the
 * buckets are bounded in number (the least recently used go first).
 */
export class SignInGuard {
  readonly #failures = new TokenBuckets();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** How long (ms) `address` must wait before it may try again; 0 when it may now. */
  waitMs(address: string): number {
    return this.#failures.check(address, FAILURES, this.#now()).waitMs;
  }

  /** Counts one failed sign-in of `address`. */
  failed(address: string): void {
    const now = this.#now();
    this.#failures.take(address, this.#failures.check(address, FAILURES, now).tokens, now);
  }
}
