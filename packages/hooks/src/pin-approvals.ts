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
export async function approvePins(book: PinBook, target: string, now: () => number = Date.now): Promise<ApproveResult> {
  const waiting = Object.entries((await book.load()).tools).filter(([name, record]) => record.pending && (name === target || record.server === target));
  const approved: string[] = [];
  // Each record is approved as it is now: another instance may have changed or approved it since it was listed.
  const data = await book.update(
    waiting.map(([name]) => name),
    (name, current) => {
      if (!current?.pending || (name !== target && current.server !== target)) return undefined;
      const { pending, definition: _, ...rest } = current;
      approved.push(name);
      return {
        ...rest,
        hash: pending.hash,
        fields: pending.fields,
        ...(pending.definition ? { definition: pending.definition } : {}),
        approvedAt: new Date(now()).toISOString(),
      };
    },
  );
  return { approved: approved.sort(), pending: listPending(data) };
}

/**
 * Records that an admin keeps the waiting definition of `name` blocked, if `hash` is still the one waiting
 * (a definition that changed since the admin saw it is asked about again); resolves with whether it was recorded.
 */
export async function keepBlocked(book: PinBook, waiting: { name: string; hash: string }, now: () => number = Date.now): Promise<boolean> {
  const { name, hash } = waiting;
  let kept = false;
  await book.update([name], (_, current) => {
    if (current?.pending?.hash !== hash || current.pending.keptBlockedAt) return undefined;
    kept = true;
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
      const why = pending.reason === "changed" ? `changed: ${changedFields(r.fields, pending.fields).join(", ")}` : "new server";
      return `${name} (${why}${pending.keptBlockedAt ? "; kept blocked" : ""})`;
    })
    .sort();
}

/** A tool waiting for approval, as an admin view lists it. */
export interface PendingApproval {
  /** `server__tool` */
  name: string;
  server: string;
  reason: PendingPin["reason"];
  /** The fields of the definition that differ from the approved one; empty for a new server's tool. */
  changed: string[];
  seenAt: string;
  /** The waiting definition's hash: a decision names it, so it cannot apply to a definition the admin has not seen. */
  hash: string;
  /** When an admin chose to keep it blocked (the page no longer asks). */
  keptBlockedAt?: string;
  /** The approved definition and the one waiting, when the pin file kept them (it keeps those up to 64 KiB). */
  approved?: Record<string, unknown>;
  proposed?: Record<string, unknown>;
}

/**
 * The quarantine of a pin book as the admin page reads and changes it: what waits, and approving it
 * (the running pin plugin reads the file again before it refuses a call, so the next call passes).
 */
export function pinApprovals(
  book: PinBook,
  now: () => number = Date.now,
): { pending(): Promise<PendingApproval[]>; approve(target: string): Promise<string[]>; keepBlocked(name: string, hash: string): Promise<boolean> } {
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
                  reason: record.pending.reason,
                  changed: record.pending.reason === "changed" ? changedFields(record.fields, record.pending.fields) : [],
                  seenAt: record.pending.seenAt,
                  hash: record.pending.hash,
                  ...(record.pending.keptBlockedAt ? { keptBlockedAt: record.pending.keptBlockedAt } : {}),
                  ...(record.definition ? { approved: record.definition } : {}),
                  ...(record.pending.definition ? { proposed: record.pending.definition } : {}),
                },
              ]
            : [],
        )
        .sort((a, b) => a.name.localeCompare(b.name));
    },
    async approve(target) {
      return (await approvePins(book, target, now)).approved;
    },
    keepBlocked: (name, hash) => keepBlocked(book, { name, hash }, now),
  };
}
