/**
 * Named text records every instance of a deployment reads and changes (Redis): the pin plugin's
 * pins and approvals. Each record changes atomically by compare-and-set, so two instances changing
 * one record at once never lose an update: the loser reads again and retries.
 */
export interface RecordTable {
  /** Every record by name. */
  all(): Promise<Map<string, string>>;
  get(name: string): Promise<string | undefined>;
  /** Sets `name` to `next` only if it still holds `expected` (undefined: absent); false when another writer changed it first. */
  swap(name: string, expected: string | undefined, next: string): Promise<boolean>;
}
