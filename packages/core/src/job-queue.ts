/**
 * Background jobs waiting for room on any instance of a deployment: an instance whose own slots are
 * full queues a job here, and every instance takes queued jobs while it has room. A job taken by an
 * instance that dies is never retried (its calls may have had effects): it is gone from the queue.
 */
export interface JobQueue {
  /** Queues job `id` with its `payload` (opaque JSON: what another instance needs to run it). */
  add(job: { id: string; payload: string }): Promise<void>;
  /** Takes job `id` out of the queue while it waits; false once an instance has taken it (or it is not there). */
  remove(id: string): Promise<boolean>;
  /**
   * Takes queued jobs, at most `concurrency` at once, while `hasRoom()` says so; `run` resolves when
   * the job has ended on this instance (its own outcome is told through the job's record, not here).
   */
  work(options: { concurrency: number; hasRoom: () => boolean; run: (id: string, payload: string) => Promise<void> }): void;
  /** Tells the queue this instance's room changed (a job ended or started here): it takes again, or stops taking. */
  roomChanged(): void;
  close(): Promise<void>;
}
