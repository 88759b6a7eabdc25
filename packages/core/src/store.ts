/** What a store knows of one entry besides its data. */
export interface StoreEntry {
  key: string;
  bytes: number;
  createdAt: number;
  /** When it stops being readable; absent for entries that do not expire. */
  expiresAt?: number;
  /** The session (or principal) it belongs to; absent for shared entries. */
  owner?: string;
}

export interface StoreWriteOptions {
  /** Readable this long, then gone. */
  ttlMs?: number;
  /** Only reads with the same owner see it. */
  owner?: string;
}

/**
 * A small key-value store of text for codemux's own data (kept results, the catalog cache).
 * Writes are atomic (a reader sees the old data or the new, never half), nothing blocks the event
 * loop, expired entries are gone, and an entry with an owner is invisible to every other owner.
 */
export interface Store {
  /** True when other codemux instances read and write the same entries (Redis): closing one instance then deletes nothing. */
  readonly shared?: boolean;
  write(key: string, data: string, options?: StoreWriteOptions): Promise<StoreEntry>;
  /** The data, or undefined when missing, expired, or another owner's. */
  read(key: string, options?: { owner?: string }): Promise<string | undefined>;
  /** The entry's facts, under the same rules as `read`. */
  stat(key: string, options?: { owner?: string }): Promise<StoreEntry | undefined>;
  /** Live entries, oldest first; only this owner's (and shared ones) when an owner is given. */
  list(options?: { owner?: string }): Promise<StoreEntry[]>;
  delete(key: string): Promise<void>;
  /** Deletes an entry; true when this call deleted it (a shared store: false when another instance deleted it first). */
  remove?(key: string): Promise<boolean>;
  /** Deletes every entry this store wrote. */
  clear(): Promise<void>;
}

/** The format of entries a shared store holds; an instance refuses entries of another format (a rolling deploy mixing versions). */
export const STORE_FORMAT_VERSION = 1;

/** Keys are names, never paths: letters, digits, ".", "_" and "-", not starting with ".". */
export const STORE_KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** True when `entry` may be seen by `owner` at `now`. */
export function visible(entry: StoreEntry, owner: string | undefined, now: number): boolean {
  if (entry.expiresAt !== undefined && entry.expiresAt <= now) return false;
  return entry.owner === undefined || entry.owner === owner;
}

/** `list`'s rule: without an owner every live entry (for housekeeping), with one what that owner may see. */
export function listed(entry: StoreEntry, owner: string | undefined, now: number): boolean {
  if (owner !== undefined) return visible(entry, owner, now);
  return entry.expiresAt === undefined || entry.expiresAt > now;
}
