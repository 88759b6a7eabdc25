/**
 * Places counted by every instance of a deployment (Redis): a policy's `concurrentJobs` holds across them.
 * A place under a key is held by a name (a job's id) until it is released or its lease runs out, so that the
 * places of an instance that died come free; whoever holds a place renews its lease while it does.
 */
export interface SharedSlots {
  /**
   * Takes a place under `key` for `holder` when fewer than `max` are held (one `holder` already holds counts
   * as taken, its lease renewed); otherwise takes none. Says how many are held, this one included when taken.
   */
  take(key: string, holder: string, options: { max: number; leaseMs: number }): Promise<{ taken: boolean; held: number }>;
  /** Renews the leases of places still held; resolves with the ones that are not (released, or run out). */
  renew(places: ReadonlyArray<{ key: string; holder: string }>, leaseMs: number): Promise<Array<{ key: string; holder: string }>>;
  /** Gives `holder`'s place under `key` back (nothing when it holds none). */
  release(key: string, holder: string): Promise<void>;
}
