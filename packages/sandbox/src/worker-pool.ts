import { PooledWorker } from "./pooled-worker.js";
import type { RuntimeOptions } from "./runtime.js";

export interface PoolTicket {
  /** Resolves with a worker that belongs to the holder until `release`. */
  worker: Promise<PooledWorker>;
  /** Gives up the place in line, or the worker if it was already handed over. */
  cancel(): void;
}

interface Waiter {
  resolve: (worker: PooledWorker) => void;
  handed: PooledWorker | undefined;
}

/** Up to `size` workers, started on demand; a dead worker's place is filled by a fresh one. */
export class WorkerPool {
  readonly #size: number;
  readonly #url: URL;
  readonly #runtimeModule: string | undefined;
  readonly #runtimeOptions: RuntimeOptions;
  readonly #all = new Set<PooledWorker>();
  readonly #idle: PooledWorker[] = [];
  readonly #waiters: Waiter[] = [];

  constructor(options: { size: number; url: URL; runtimeModule?: string; runtimeOptions: RuntimeOptions }) {
    this.#size = options.size;
    this.#url = options.url;
    this.#runtimeModule = options.runtimeModule;
    this.#runtimeOptions = options.runtimeOptions;
  }

  acquire(): PoolTicket {
    const waiter: Waiter = { resolve: () => undefined, handed: undefined };
    const worker = new Promise<PooledWorker>((resolve) => {
      waiter.resolve = resolve;
    });
    this.#waiters.push(waiter);
    this.#dispatch();
    return {
      worker,
      cancel: () => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        if (waiter.handed) this.release(waiter.handed);
      },
    };
  }

  release(worker: PooledWorker): void {
    if (!worker.dead && this.#all.has(worker)) this.#idle.push(worker);
    this.#dispatch();
    // A spare worker, so that back-to-back runs alternate and each worker prepares its next engine meanwhile.
    if (this.#idle.length > 0 && this.#all.size < this.#size && !this.#idle.some((idle) => idle.ready)) {
      const spare = this.#spawn();
      if (spare) this.#idle.push(spare);
    }
  }

  async close(): Promise<void> {
    const workers = [...this.#all];
    this.#all.clear();
    this.#idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  #dispatch(): void {
    while (this.#waiters.length > 0) {
      // The longest-idle worker whose engine is ready; else one preparing its engine (ready in a moment); else one starting; else a new one.
      let at = this.#idle.findIndex((idle) => idle.ready);
      if (at < 0) at = this.#idle.findIndex((idle) => idle.started);
      const worker = this.#idle.splice(Math.max(0, at), 1)[0] ?? this.#spawn();
      if (!worker) return;
      const waiter = this.#waiters.shift() as Waiter;
      waiter.handed = worker;
      waiter.resolve(worker);
    }
  }

  #spawn(): PooledWorker | undefined {
    if (this.#all.size >= this.#size) return undefined;
    const worker = new PooledWorker({
      url: this.#url,
      runtimeModule: this.#runtimeModule,
      runtimeOptions: this.#runtimeOptions,
      onReady: () => this.#dispatch(),
      onDeath: (dead) => {
        this.#all.delete(dead);
        const index = this.#idle.indexOf(dead);
        if (index >= 0) this.#idle.splice(index, 1);
        this.#dispatch();
      },
    });
    this.#all.add(worker);
    return worker;
  }
}
