/**
 * Background jobs seen by every instance of a deployment: each instance publishes the records of
 * the jobs it runs (opaque JSON), any instance lists a principal's, asks for a cancel that the
 * running instance carries out, and tells whether the running instance is still there.
 */
export interface JobShare {
  /** This instance's id, written into the records of the jobs it runs. */
  readonly instanceId: string;
  /** Saves a job's record for `ttlMs`, listed under its principal. */
  put(job: { id: string; principal: string; createdAt: number; record: string; ttlMs: number }): Promise<void>;
  /** `principal`'s job records, newest first, at most `limit`. */
  list(principal: string, limit: number): Promise<string[]>;
  /** Job `id`'s record, or undefined when there is none (the caller checks its principal). */
  get(id: string): Promise<string | undefined>;
  /** Asks the instance running job `id` to cancel it (the caller checked the principal). */
  cancel(id: string, by: string): Promise<void>;
  /** Calls `handler` for every cancel asked of any instance. */
  onCancel(handler: (id: string, by: string) => void): void;
  /** True while instance `instanceId` is registered (it beats); false once it is gone. */
  alive(instanceId: string): Promise<boolean>;
  /**
   * Appends one line (JSON) to job `id`'s transcript, owned by `principal`: only its newest `maxBytes`
   * are kept, and it expires with the job's record (each `put` renews it).
   */
  appendTranscript(entry: { id: string; principal: string; line: string; maxBytes: number; ttlMs: number }): Promise<void>;
  /** Job `id`'s transcript lines, oldest first; empty when there is none or it is not `principal`'s. */
  transcript(id: string, principal: string): Promise<string[]>;
  /** Saves a job's result too large for its record (JSON), owned by `principal`, expiring with the record. */
  putResult(entry: { id: string; principal: string; result: string; ttlMs: number }): Promise<void>;
  /** Job `id`'s result saved by `putResult`; undefined when there is none or it is not `principal`'s. */
  result(id: string, principal: string): Promise<string | undefined>;
}
