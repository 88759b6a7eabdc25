import type { JobRecord } from "./types";

/**
 * The jobs this process runs, and those waiting here for a slot. The next to start is the oldest of
 * the principal running the fewest, so one principal's backlog never holds the others' jobs back.
 */
export class LocalQueue<J extends { record: JobRecord }> {
  readonly #waiting: J[] = [];
  readonly #running = new Set<J>();

  constructor(readonly maxConcurrent: number) {}

  get running(): number {
    return this.#running.size;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  hasSlot(): boolean {
    return this.#running.size < this.maxConcurrent;
  }

  /** Puts a job at the end of the line; resolves to its 1-based place. */
  enqueue(job: J): number {
    return this.#waiting.push(job);
  }

  /** Puts a job first in line. */
  enqueueFirst(job: J): void {
    this.#waiting.unshift(job);
  }

  started(job: J): void {
    this.#running.add(job);
  }

  /** Takes a job out of the line or the running set, saying which it was in. */
  remove(job: J): { wasRunning: boolean; wasWaiting: boolean } {
    const wasRunning = this.#running.delete(job);
    const index = this.#waiting.indexOf(job);
    if (index >= 0) this.#waiting.splice(index, 1);
    return { wasRunning, wasWaiting: index >= 0 };
  }

  /** The job to start now, out of the line: none when no slot is free or nothing waits. */
  next(): J | undefined {
    if (!this.hasSlot() || this.#waiting.length === 0) return undefined;
    const running = new Map<string, number>();
    for (const job of this.#running) running.set(job.record.principal, (running.get(job.record.principal) ?? 0) + 1);
    let pick = 0;
    for (let i = 1; i < this.#waiting.length; i++) {
      const candidate = this.#waiting[i] as J;
      if ((running.get(candidate.record.principal) ?? 0) < (running.get((this.#waiting[pick] as J).record.principal) ?? 0)) pick = i;
    }
    return this.#waiting.splice(pick, 1)[0];
  }

  /** 1-based place in line of a waiting job (jobs of principals running fewer may start before it). */
  position(id: string): number | undefined {
    const index = this.#waiting.findIndex((job) => job.record.id === id);
    return index >= 0 ? index + 1 : undefined;
  }

  /** The waiting jobs, in line order. */
  waitingJobs(): J[] {
    return [...this.#waiting];
  }

  /** The records of the waiting jobs, `except` one. */
  waitingRecords(except?: J): JobRecord[] {
    return this.#waiting.filter((job) => job !== except).map((job) => job.record);
  }
}
