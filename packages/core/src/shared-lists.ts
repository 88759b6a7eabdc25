/**
 * Short lists of text, newest first, one per owner, that every instance of a deployment reads and adds
 * to (Redis): the memory plugin's memories. An item is added atomically, so two instances adding at once
 * each keep theirs (a whole-list write would lose one).
 */
export interface SharedLists {
  /** Adds `item` first in `owner`'s list, keeps the newest `max`; the list expires `ttlMs` after its last change. */
  push(owner: string, item: string, options: { max: number; ttlMs?: number }): Promise<void>;
  /** The newest `limit` items of `owner`'s list (none: an empty list). */
  read(owner: string, limit: number): Promise<string[]>;
  /** Deletes `owner`'s list; returns how many items it held. */
  clear(owner: string): Promise<number>;
}
