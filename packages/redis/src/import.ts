import type { Store } from "@codemux/core";

/** What `importEntries` moved, and what it passed over (gone, expired, or another owner's, which are never read). */
export interface ImportReport {
  imported: string[];
  skipped: string[];
}

/**
 * Copies the entries `keys` of one store into another (`codemux store import`: files to Redis), each
 * with its owner and the time it has left; one at a time, so memory holds one entry at most.
 */
export async function importEntries(from: Store, to: Store, { keys, now = Date.now() }: { keys: string[]; now?: number }): Promise<ImportReport> {
  const report: ImportReport = { imported: [], skipped: [] };
  for (const key of keys) {
    const entry = await from.stat(key);
    const data = await from.read(key);
    const ttlMs = entry?.expiresAt === undefined ? undefined : entry.expiresAt - now;
    if (data === undefined || (ttlMs !== undefined && ttlMs <= 0)) {
      report.skipped.push(key);
      continue;
    }
    await to.write(key, data, { ...(ttlMs !== undefined ? { ttlMs } : {}), ...(entry?.owner !== undefined ? { owner: entry.owner } : {}) });
    report.imported.push(key);
  }
  return report;
}
