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
  /** Asks the instance running job `id` to cancel it (the caller checked the principal). */
  cancel(id: string, by: string): Promise<void>;
  /** Calls `handler` for every cancel asked of any instance. */
  onCancel(handler: (id: string, by: string) => void): void;
  /** True while instance `instanceId` is registered (it beats); false once it is gone. */
  alive(instanceId: string): Promise<boolean>;
}
