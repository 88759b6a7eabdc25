import type { PinApprovals } from "@codemux/core";
import type { PinBook } from "./pin-book";
import { changedFields, type PendingPin, type PinFile } from "./pin-store";

export interface ApproveResult {
  approved: string[];
  /** Tools still waiting, when nothing matched. */
  pending: string[];
}

/**
 * Approves the pending definitions of `SERVER` (all its tools) or `SERVER__TOOL` in the pin book:
 * what `codemux approve` does. A running codemux reads the pins again before refusing a call.
 */
export async function approvePins(book: PinBook, target: string, { now = Date.now, hash }: { now?: () => number; hash?: string } = {}): Promise<ApproveResult> {
  const waiting = Object.entries((await book.load()).tools).filter(([name, record]) => record.pending && (name === target || record.server === target));
  const approved = new Set<string>();
  // Each record is approved as it is now: another instance may have changed or approved it since it was listed.
  // A shared book retries a change whose compare-and-set lost, so each try says afresh whether its name was approved.
  const data = await book.update(
    waiting.map(([name]) => name),
    (name, current) => {
      const stale = hash !== undefined && current?.pending?.hash !== hash;
      if (!current?.pending || stale || (name !== target && current.server !== target)) {
        approved.delete(name);
        return undefined;
      }
      const { pending, definition: _, ...rest } = current;
      approved.add(name);
      return {
        ...rest,
        hash: pending.hash,
        fields: pending.fields,
        ...(pending.definition ? { definition: pending.definition } : {}),
        approvedAt: new Date(now()).toISOString(),
      };
    },
  );
  return { approved: [...approved].sort(), pending: listPending(data) };
}

/**
 * Records that an admin keeps the waiting definition of `name` blocked, if `hash` is still the one waiting
 * (a definition that changed since the admin saw it is asked about again); resolves with whether it was recorded.
 */
export async function keepBlocked(book: PinBook, waiting: { name: string; hash: string }, now: () => number = Date.now): Promise<boolean> {
  const { name, hash } = waiting;
  let kept = false;
  await book.update([name], (_, current) => {
    // Set on every try: a shared book retries this when its compare-and-set lost.
    kept = current?.pending?.hash === hash && !current.pending.keptBlockedAt;
    if (!kept || !current?.pending) return undefined;
    return { ...current, pending: { ...current.pending, keptBlockedAt: new Date(now()).toISOString() } };
  });
  return kept;
}

/** Names of tools waiting for approval, with why. */
export function listPending(data: PinFile): string[] {
  return Object.entries(data.tools)
    .filter(([, r]) => r.pending)
    .map(([name, r]) => {
      const pending = r.pending as PendingPin;
      const why = [
        pending.reason === "changed" ? `changed: ${changedFields(r.fields, pending.fields).join(", ")}` : pending.reason === "new server" ? "new server" : "",
        pending.findings?.length ? `scan found ${pending.findings.map((f) => `${f.rule} (${f.severity}) in ${f.path}`).join(", ")}` : "",
      ]
        .filter(Boolean)
        .join("; ");
      return `${name} (${why}${pending.keptBlockedAt ? "; kept blocked" : ""})`;
    })
    .sort();
}

/**
 * The quarantine of a pin book as the admin page reads and changes it: what waits, and approving it
 * (the running pin plugin reads the file again before it refuses a call, so the next call passes).
 */
export function pinApprovals(book: PinBook, now: () => number = Date.now): PinApprovals {
  return {
    async pending() {
      const data = await book.load();
      return Object.entries(data.tools)
        .flatMap(([name, record]) =>
          record.pending
            ? [
                {
                  name,
                  server: record.server,
                  ...(record.kind ? { kind: record.kind } : {}),
                  reason: record.pending.reason,
                  changed: record.pending.reason === "changed" ? changedFields(record.fields, record.pending.fields) : [],
                  seenAt: record.pending.seenAt,
                  hash: record.pending.hash,
                  ...(record.pending.findings?.length ? { findings: record.pending.findings } : {}),
                  ...(record.pending.keptBlockedAt ? { keptBlockedAt: record.pending.keptBlockedAt } : {}),
                  ...(record.definition ? { approved: record.definition } : {}),
                  ...(record.pending.definition ? { proposed: record.pending.definition } : {}),
                },
              ]
            : [],
        )
        .sort((a, b) => a.name.localeCompare(b.name));
    },
    async approve(target, hash) {
      return (await approvePins(book, target, { now, ...(hash === undefined ? {} : { hash }) })).approved;
    },
    keepBlocked: (name, hash) => keepBlocked(book, { name, hash }, now),
  };
}
