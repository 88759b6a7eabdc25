/** Counts a server's requests in flight, and stops a lazy server once none has come for its idle time. */
export class IdleStop {
  #inFlight = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #idleMs: () => number;
  readonly #stop: () => Promise<void>;

  /** `idleMs`: how long an unused server runs on (0: never stopped); `stop`: stops it. */
  constructor(options: { idleMs: () => number; stop: () => Promise<void> }) {
    this.#idleMs = options.idleMs;
    this.#stop = options.stop;
  }

  get busy(): boolean {
    return this.#inFlight > 0;
  }

  begin(): void {
    this.#inFlight++;
    clearTimeout(this.#timer);
  }

  end(): void {
    this.#inFlight--;
    this.schedule();
  }

  /** Starts the idle wait when nothing is in flight (again from the start when it already ran). */
  schedule(): void {
    const idleMs = this.#idleMs();
    if (idleMs <= 0 || this.#inFlight > 0) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#stop(), idleMs);
    this.#timer.unref();
  }

  cancel(): void {
    clearTimeout(this.#timer);
  }
}
