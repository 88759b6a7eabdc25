interface Waiter {
  alone: boolean;
  enter: (release: () => void) => void;
}

/** Admits up to `capacity` holders at once, or one holder alone; first come, first served. */
export class BundleGate {
  readonly #capacity: number;
  readonly #queue: Waiter[] = [];
  #inside = 0;
  #alone = false;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Resolves with the function that leaves the gate. */
  enter(alone: boolean): Promise<() => void> {
    return new Promise((enter) => {
      this.#queue.push({ alone, enter });
      this.#admit();
    });
  }

  #admit(): void {
    for (;;) {
      const next = this.#queue[0];
      if (!next || this.#alone) return;
      if (next.alone ? this.#inside > 0 : this.#inside >= this.#capacity) return;
      this.#queue.shift();
      this.#inside++;
      this.#alone = next.alone;
      let left = false;
      next.enter(() => {
        if (left) return;
        left = true;
        this.#inside--;
        if (next.alone) this.#alone = false;
        this.#admit();
      });
    }
  }
}
