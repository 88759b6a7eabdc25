/**
 * When a worker waits for the answers to the calls it just sent, it may poll its port for a short
 * window instead of sleeping: on a virtual machine, waking an idle thread costs about as much as a
 * fast tool call (~40 µs each way measured on the 2-core bench machine), and a chain of calls pays it
 * once per call. Polling burns the core it runs on, so it is allowed only while the machine has a
 * core to spare for it (at most one run per two cores), and it backs off when answers keep coming
 * after the window (slow tools): after n misses in a row it skips the next 2^n − 1 waits (n ≤ 6).
 */
export class SpinPolicy {
  #misses = 0;
  #skip = 0;

  constructor(
    /** How long one wait polls, in microseconds; 0 never polls. */
    readonly windowUs: number,
    readonly cores: number,
  ) {}

  /** Whether to poll for the next answers, with `busyRuns` runs in progress in the pool. */
  shouldSpin(busyRuns: number): boolean {
    if (this.windowUs <= 0 || busyRuns * 2 > this.cores) return false;
    if (this.#skip > 0) {
      this.#skip--;
      return false;
    }
    return true;
  }

  /** The answers came within the window. */
  hit(): void {
    this.#misses = 0;
  }

  /** The window passed with no answer. */
  miss(): void {
    this.#misses = Math.min(this.#misses + 1, 6);
    this.#skip = (1 << this.#misses) - 1;
  }
}
