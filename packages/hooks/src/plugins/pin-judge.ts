import { type ScanFinding, type ScanVerdict, verdictAtLeast } from "@codemux/core";
import { changedFields, type hashDefinition, MAX_KEPT_FINDINGS, type PinFile, type PinRecord } from "../pin-store";

export type Verdict = { ok: true } | { ok: false; reason: string };

/** A definition's hash, its fields' hashes, and what the pin record keeps of it. */
export type HashedDefinition = ReturnType<typeof hashDefinition> & { kept: { definition?: Record<string, unknown> } };

/** What a definition is judged by: the pins as read, the pin options, the clock. */
export interface Judging {
  pins: PinFile;
  /** Quarantines a definition the scanner rates `high` or worse until approved. */
  scan: boolean;
  /** Quarantines a changed definition. */
  changes: boolean;
  quarantineNewServers: boolean;
  /** Now, as the pin file writes times. */
  now(): string;
}

/** A definition as listed now: its name in the pin book, its server, its hashes, and the scanner's verdict on it. */
export interface SeenDefinition {
  name: string;
  server: string;
  hashed: HashedDefinition;
  scan?: { verdict: ScanVerdict; findings: readonly ScanFinding[] } | undefined;
}

const OK: Verdict = { ok: true };

/** Who approves and where: a caller reached over HTTP cannot run the CLI on the gateway's host, so the admin page comes first. */
function approvedBy(target: string): string {
  return `an admin of this codemux approves it on the admin page (/ui, Approvals) or with \`codemux approve ${target}\` on the machine codemux runs on.`;
}

/** Records the definition in the pins (the names of the records it changed go to `dirty`); the verdict for a call of it. */
export function judge(judging: Judging, seen: SeenDefinition, dirty: string[]): Verdict {
  const { pins } = judging;
  const { name } = seen;
  if (judging.scan && verdictAtLeast(seen.scan?.verdict, "high")) return judgeFlagged(judging, seen, dirty);
  let record: PinRecord | undefined = pins.tools[name];
  if (record?.hash === undefined && record?.pending?.reason === "scan") {
    // Held only for what the scan found, which is gone: as if seen for the first time.
    delete pins.tools[name];
    record = undefined;
    dirty.push(name);
  }
  if (!judging.changes) {
    // The scan's own book: only what the scan holds is recorded; a definition no longer flagged needs no approval.
    if (record?.pending?.reason === "scan") {
      delete record.pending;
      dirty.push(name);
    }
    return OK;
  }
  return record ? judgeKnown(judging, seen, dirty) : judgeFirstSight(judging, seen, dirty);
}

/** A definition the scan rates `high` or worse: held until approved as it is now. */
function judgeFlagged(judging: Judging, seen: SeenDefinition, dirty: string[]): Verdict {
  const { pins, now } = judging;
  const { name, server } = seen;
  const { hash, fields, kept } = seen.hashed;
  const record = pins.tools[name];
  // Approved as it is now (codemux approve): the approval covers this definition. Pinned on first sight only: ask.
  if (record?.hash === hash && record.approvedAt !== undefined && !record.pending) return OK;
  const findings = (seen.scan?.findings ?? []).filter((f) => verdictAtLeast(f.severity, "high")).slice(0, MAX_KEPT_FINDINGS);
  const reason =
    record?.hash !== undefined && record.hash !== hash && judging.changes
      ? "changed"
      : record?.hash === undefined && record?.pending?.reason === "new server"
        ? "new server"
        : "scan";
  if (record?.pending?.hash !== hash) {
    pins.tools[name] = { ...(record ?? { server, firstSeen: now() }), pending: { hash, fields, seenAt: now(), reason, findings, ...kept } };
    dirty.push(name);
  }
  const keptBlocked = pins.tools[name]?.pending?.keptBlockedAt !== undefined;
  const what = findings.map((f) => `${f.rule} in ${f.path}`).join(", ");
  return {
    ok: false,
    reason: keptBlocked
      ? `${name} is quarantined: codemux's scan found text aimed at the model in its definition (${what}), and an admin chose to keep it blocked. It was not called. To allow it after all: codemux approve ${name}`
      : `${name} is quarantined: codemux's scan found text aimed at the model in its definition (${what}). It was not called, and the model is not shown its text. If the definition is harmless, the user can approve it with: codemux approve ${name}`,
  };
}

/** A tool never pinned: pinned now, or held when new servers wait for approval and its server is not trusted yet. */
function judgeFirstSight(judging: Judging, seen: SeenDefinition, dirty: string[]): Verdict {
  const { pins, now } = judging;
  const { name, server } = seen;
  const { hash, fields, kept } = seen.hashed;
  dirty.push(name);
  const trusted = () => Object.values(pins.tools).some((r) => r.server === server && r.hash !== undefined);
  if (judging.quarantineNewServers && !trusted()) {
    pins.tools[name] = { server, firstSeen: now(), pending: { hash, fields, seenAt: now(), reason: "new server", ...kept } };
    return {
      ok: false,
      reason: `${name} is quarantined: server "${server}" is new, and new servers wait for approval (plugins.pin.quarantineNewServers). It was not called. If the server is trusted, ${approvedBy(server)}`,
    };
  }
  pins.tools[name] = { server, hash, fields, firstSeen: now(), ...kept };
  return OK;
}

/** A tool pinned before: passes as pinned; a changed definition (or one of a server waiting for approval) waits for approval. */
function judgeKnown(judging: Judging, seen: SeenDefinition, dirty: string[]): Verdict {
  const { name, server } = seen;
  const { hash, fields, kept } = seen.hashed;
  const record = judging.pins.tools[name] as PinRecord;
  if (record.hash === hash) {
    // A file from before definitions were kept gets its approved one, so that a later change can be shown as a diff.
    if (record.pending || (!record.definition && kept.definition)) {
      delete record.pending;
      Object.assign(record, kept);
      dirty.push(name);
    }
    return OK;
  }
  if (record.pending?.hash !== hash || record.pending.reason === "scan") {
    record.pending = { hash, fields, seenAt: judging.now(), reason: record.hash === undefined ? "new server" : "changed", ...kept };
    dirty.push(name);
  }
  const keptBlocked = record.pending?.keptBlockedAt !== undefined;
  if (record.hash === undefined) {
    return {
      ok: false,
      reason: keptBlocked
        ? `${name} is quarantined: server "${server}" is new, and an admin chose to keep it blocked. It was not called. To allow it after all, ${approvedBy(server)}`
        : `${name} is quarantined: server "${server}" is new and waits for approval. It was not called. If the server is trusted, ${approvedBy(server)}`,
    };
  }
  const changed = `${changedFields(record.fields, fields).join(", ") || "definition"} changed`;
  return {
    ok: false,
    reason: keptBlocked
      ? `${name} is quarantined: its definition changed since codemux pinned it (${changed}), and an admin chose to keep the new definition blocked. It was not called. To allow it after all, ${approvedBy(name)}`
      : `${name} is quarantined: its definition changed since codemux pinned it (${changed}), which is how a server can swap a trusted tool for a harmful one. It was not called. If the change is expected, ${approvedBy(name)}`,
  };
}
