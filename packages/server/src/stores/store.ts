import type { StoreEntry, StoreWriteOptions } from "@codemux/core";

export { STORE_KEY_PATTERN, listed, visible, type Store, type StoreEntry, type StoreWriteOptions } from "@codemux/core";

/** The facts of an entry written now. */
export function newEntry(key: string, data: string, options: StoreWriteOptions, now: number): StoreEntry {
  return {
    key,
    bytes: Buffer.byteLength(data),
    createdAt: now,
    ...(options.ttlMs !== undefined ? { expiresAt: now + options.ttlMs } : {}),
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
  };
}
