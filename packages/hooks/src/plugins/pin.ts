import { type Logger, type ScanFinding, type ScanVerdict, verdictAtLeast } from "@codemux/core";
import { isAbsolute, join, resolve } from "node:path";
import { PluginRefusedError } from "../errors";
import { filePinBook, sharedPinBook, type PinBook } from "../pin-book";
import { changedFields, hashDefinition, keptDefinition, MAX_KEPT_FINDINGS, type PinFile, type PinRecord } from "../pin-store";
import type { Plugin, PluginMetrics, ToolInfo } from "../types";

export interface PinOptions {
  /** The pin file; `pins.json` under the data dir by default; relative to the config's folder. */
  file?: string;
  /** Tools of a server never seen before are quarantined until `codemux approve SERVER`; default false (trusted on first sight). */
  quarantineNewServers?: boolean;
  /** Quarantines a definition the scanner rates `high` or worse until approved (security.scan "quarantine"; set by the host). */
  scan?: boolean;
  /** Quarantines a changed definition; default true. False for the pin book the scan alone keeps (no `plugins.pin` in the config). */
  changes?: boolean;
  /** How often the pins are read again while some tool is withheld from the model, to release it once approved elsewhere; default 2000. */
  recheckMs?: number;
}

/** A tool as the catalog lists it (a codemux `CatalogEntry` fits). */
export interface SeenTool {
  qualifiedName: string;
  server: string;
  tool: ToolInfo;
  /** The scanner's verdict on the definition, when the host scanned it. */
  scan?: { verdict: ScanVerdict; findings: readonly ScanFinding[] };
}

/** What the pin book calls an item besides tools that the scan may hold: a server's instructions, a resource, a prompt... */
export type HeldItemKind = NonNullable<PinRecord["kind"]>;

/** A server's instructions, resource, resource template, prompt or skill the scan flagged (a codemux `ScreenedItem` fits). */
export interface SeenItem {
  /** Its name in the pin book: `server:instructions`, `server:prompt:NAME`, `server:resource:URI`... */
  name: string;
  server: string;
  kind: HeldItemKind;
  definition: Record<string, unknown>;
  scan: { verdict: ScanVerdict; findings: readonly ScanFinding[] };
}

/** What the model is shown of a tool the pin plugin holds back: the definition approved before (a changed tool), or nothing. */
export type Withheld = Map<string, ToolInfo | undefined>;

/** The pin plugin as the host screens the catalog through it. */
export interface PinScreen {
  /** Judges every tool as listed now; resolves nothing, answers at once: the tools held back, each with what the model may see instead. */
  screen(tools: readonly SeenTool[]): Withheld;
  /**
   * Judges the flagged items of one server and kind as listed now: the names held back until approved. With `complete`,
   * a waiting item of that kind no longer among them (changed, or gone) waits no more.
   */
  holdItems(scope: { server: string; kind: HeldItemKind; complete: boolean }, flagged: readonly SeenItem[]): ReadonlySet<string>;
  /** Called when a tool held back may be shown again (approved here, by `codemux approve` or by another instance): screen again. */
  onRelease(listener: () => void): void;
  /** Resolves once what `screen` recorded is in the pin book. */
  written(): Promise<void>;
}

/**
 * Where the pin file is: `file` (relative to the config's folder), else `pins.json` in codemux's
 * folder. `codemux approve` finds it by the same rule.
 */
export function pinFilePath(options: { file?: string | undefined; configDir: string; dataDir: string }): string {
  if (!options.file) return join(options.dataDir, "pins.json");
  return isAbsolute(options.file) ? options.file : resolve(options.configDir, options.file);
}

/** Who approves and where: a caller reached over HTTP cannot run the CLI on the gateway's host, so the admin page comes first. */
function approvedBy(target: string): string {
  return `an admin of this codemux approves it on the admin page (/ui, Approvals) or with \`codemux approve ${target}\` on the machine codemux runs on.`;
}

/** The pin file a config file names (`plugins.pin.file`), else the default; for `codemux approve`. */
export function pinFileOfConfig(options: { config: unknown; configDir: string; dataDir: string }): string {
  const section = (options.config as { plugins?: { pin?: { file?: unknown } } } | undefined)?.plugins?.pin;
  const file = typeof section?.file === "string" ? section.file : undefined;
  return pinFilePath({ file, configDir: options.configDir, dataDir: options.dataDir });
}

type Verdict = { ok: true } | { ok: false; reason: string };

/** The `definition` field of a pin record, when the definition is small enough to keep. */
function kept(definition: ToolInfo): { definition?: Record<string, unknown> } {
  const value = keptDefinition(definition);
  return value ? { definition: value } : {};
}

/**
 * `pin`: the hash of every tool's definition is recorded on first sight (on its first call, or
 * when the host reports the catalog with `see`); a later change quarantines the tool until
 * `codemux approve SERVER[__TOOL]`. Fail-closed.
 */
export function pinPlugin(
  options: PinOptions = {},
): Plugin & PinScreen & { see(tools: readonly SeenTool[]): Promise<void>; readonly book: PinBook | undefined } {
  let book: PinBook | undefined;
  let pins: PinFile = { version: 1, tools: {} };
  let clock: () => number = Date.now;
  let logger: Logger | undefined;
  let metrics: PluginMetrics | undefined;
  let saving: Promise<void> = Promise.resolve();
  // A definition object stays the same until its server lists tools again: hash it (and copy what is kept of it) once.
  const hashes = new WeakMap<object, ReturnType<typeof hashDefinition> & { kept: { definition?: Record<string, unknown> } }>();
  const hashOf = (definition: ToolInfo) => {
    let hashed = hashes.get(definition);
    if (!hashed) hashes.set(definition, (hashed = { ...hashDefinition(definition), kept: kept(definition) }));
    return hashed;
  };

  const now = () => new Date(clock()).toISOString();
  const trusted = (server: string) => Object.values(pins.tools).some((r) => r.server === server && r.hash !== undefined);

  /** Writes the records of these tools over the book's current content, but keeps an approval of what this one saw pending. */
  const save = (names: string[]) => {
    const records = Object.fromEntries(names.map((n) => [n, pins.tools[n]]));
    saving = saving.then(async () => {
      if (!book) return;
      try {
        pins = await book.update(names, (name, current) => {
          const mine = records[name];
          // Another process approved the very definition this one holds pending since this one read it: the approval stands.
          if (!mine || (current?.hash !== undefined && current.hash === mine.pending?.hash)) return undefined;
          // The book already holds this pending definition, maybe with an admin's "keep blocked": that decision stands too.
          if (mine.pending && current?.pending?.hash === mine.pending.hash) return undefined;
          return mine;
        });
      } catch (error) {
        logger?.warn(`pin: ${(error as Error).message}`);
      }
    });
    return saving;
  };

  const changes = options.changes !== false;
  /** Tools held back from the model, by name: the definition the server lists now (what a call of it is judged by). */
  const withheld = new Map<string, { server: string; definition: ToolInfo; scan: SeenTool["scan"] }>();
  /** Items held back from the model, by name: the definition listed now, which an approval must name. */
  const withheldItems = new Map<string, { server: string; kind: HeldItemKind; definition: ToolInfo }>();
  const releaseListeners: Array<() => void> = [];
  let recheck: NodeJS.Timeout | undefined;

  /** Records the definition; the verdict for a call of it. */
  const judge = (name: string, server: string, definition: ToolInfo, dirty: string[], scan?: SeenTool["scan"]): Verdict => {
    const { hash, fields, kept: keep } = hashOf(definition);
    let record: PinRecord | undefined = pins.tools[name];
    const flagged = options.scan === true && verdictAtLeast(scan?.verdict, "high");
    if (flagged) {
      // Approved as it is now (codemux approve): the approval covers this definition. Pinned on first sight only: ask.
      if (record?.hash === hash && record.approvedAt !== undefined && !record.pending) return { ok: true };
      const findings = scan!.findings.filter((f) => verdictAtLeast(f.severity, "high")).slice(0, MAX_KEPT_FINDINGS);
      const reason =
        record?.hash !== undefined && record.hash !== hash && changes
          ? "changed"
          : record?.hash === undefined && record?.pending?.reason === "new server"
            ? "new server"
            : "scan";
      if (record?.pending?.hash !== hash) {
        pins.tools[name] = {
          ...(record ?? { server, firstSeen: now() }),
          pending: { hash, fields, seenAt: now(), reason, findings, ...keep },
        };
        dirty.push(name);
      }
      const keptBlocked = pins.tools[name]!.pending?.keptBlockedAt !== undefined;
      const what = findings.map((f) => `${f.rule} in ${f.path}`).join(", ");
      return {
        ok: false,
        reason: keptBlocked
          ? `${name} is quarantined: codemux's scan found text aimed at the model in its definition (${what}), and an admin chose to keep it blocked. It was not called. To allow it after all: codemux approve ${name}`
          : `${name} is quarantined: codemux's scan found text aimed at the model in its definition (${what}). It was not called, and the model is not shown its text. If the definition is harmless, the user can approve it with: codemux approve ${name}`,
      };
    }
    if (record?.hash === undefined && record?.pending?.reason === "scan") {
      // Held only for what the scan found, which is gone: as if seen for the first time.
      delete pins.tools[name];
      record = undefined;
      dirty.push(name);
    }
    if (!changes) {
      // The scan's own book: only what the scan holds is recorded; a definition no longer flagged needs no approval.
      if (record?.pending?.reason === "scan") {
        delete record.pending;
        dirty.push(name);
      }
      return { ok: true };
    }
    if (!record) {
      if (options.quarantineNewServers && !trusted(server)) {
        pins.tools[name] = { server, firstSeen: now(), pending: { hash, fields, seenAt: now(), reason: "new server", ...keep } };
        dirty.push(name);
        return {
          ok: false,
          reason: `${name} is quarantined: server "${server}" is new, and new servers wait for approval (plugins.pin.quarantineNewServers). It was not called. If the server is trusted, ${approvedBy(server)}`,
        };
      }
      pins.tools[name] = { server, hash, fields, firstSeen: now(), ...keep };
      dirty.push(name);
      return { ok: true };
    }
    if (record.hash === hash) {
      // A file from before definitions were kept gets its approved one, so that a later change can be shown as a diff.
      if (record.pending || (!record.definition && keep.definition)) {
        delete record.pending;
        Object.assign(record, keep);
        dirty.push(name);
      }
      return { ok: true };
    }
    if (record.pending?.hash !== hash || record.pending.reason === "scan") {
      record.pending = { hash, fields, seenAt: now(), reason: record.hash === undefined ? "new server" : "changed", ...keep };
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
  };

  const release = () => {
    for (const listener of releaseListeners) listener();
  };

  /** While some tool is withheld, reads the pins again now and then: an approval made elsewhere releases it without a call. */
  const scheduleRecheck = () => {
    if (recheck || (withheld.size === 0 && withheldItems.size === 0) || !book || releaseListeners.length === 0) return;
    recheck = setTimeout(async () => {
      recheck = undefined;
      try {
        await saving;
        const fresh = await book!.load();
        const freed = [...withheld, ...withheldItems].some(([name, w]) => {
          const record = fresh.tools[name];
          return record?.hash === hashOf(w.definition).hash && !record.pending;
        });
        pins = fresh;
        if (freed) release();
      } catch (error) {
        logger?.warn(`pin: ${(error as Error).message}`);
      }
      scheduleRecheck();
    }, options.recheckMs ?? 2_000);
    recheck.unref();
  };

  return {
    name: "pin",
    priority: 850,
    failClosed: true,
    get book() {
      return book;
    },
    async init(ctx) {
      clock = ctx.clock;
      logger = ctx.logger;
      metrics = ctx.metrics;
      // With a shared table (Redis) every instance pins and approves the same records; else the pin file.
      book = ctx.pinRecords ? sharedPinBook(ctx.pinRecords) : filePinBook(pinFilePath({ file: options.file, configDir: ctx.configDir, dataDir: ctx.dataDir }));
      pins = await book.load();
    },
    async see(tools) {
      const dirty: string[] = [];
      // A withheld tool was judged by `screen` on the definition its server lists; the catalog may show the approved one instead.
      for (const t of tools) if (!withheld.has(t.qualifiedName)) judge(t.qualifiedName, t.server, t.tool, dirty, t.scan);
      if (dirty.length) await save(dirty);
    },
    screen(tools) {
      const dirty: string[] = [];
      const held: Withheld = new Map();
      const servers = new Set(tools.map((t) => t.server));
      for (const [name, w] of withheld) if (servers.has(w.server)) withheld.delete(name);
      for (const t of tools) {
        if (judge(t.qualifiedName, t.server, t.tool, dirty, t.scan).ok) continue;
        withheld.set(t.qualifiedName, { server: t.server, definition: t.tool, scan: t.scan });
        const record = pins.tools[t.qualifiedName];
        // A changed tool shows its approved definition (its name is what was approved); else nothing of it reaches the model.
        held.set(t.qualifiedName, record?.hash !== undefined && record.definition?.name === t.tool.name ? (record.definition as ToolInfo) : undefined);
      }
      if (dirty.length) void save(dirty);
      scheduleRecheck();
      return held;
    },
    holdItems(scope, flagged) {
      const held = new Set<string>();
      if (options.scan !== true) return held;
      const dirty: string[] = [];
      const names = new Set(flagged.map((f) => f.name));
      for (const [name, w] of withheldItems) if (w.server === scope.server && w.kind === scope.kind && !names.has(name)) withheldItems.delete(name);
      if (scope.complete) {
        // What waited of this kind and is no longer flagged as listed now (changed or gone) waits no more: the next flag asks afresh.
        for (const [name, record] of Object.entries(pins.tools)) {
          if (record.kind !== scope.kind || record.server !== scope.server || !record.pending || names.has(name)) continue;
          // Kept without `pending` (a record the book can write; a flag of it later asks afresh).
          delete record.pending;
          dirty.push(name);
        }
      }
      for (const item of flagged) {
        const definition = item.definition as unknown as ToolInfo;
        if (judge(item.name, item.server, definition, dirty, item.scan).ok) continue;
        const record = pins.tools[item.name];
        if (record && record.kind !== item.kind) {
          record.kind = item.kind;
          if (!dirty.includes(item.name)) dirty.push(item.name);
        }
        withheldItems.set(item.name, { server: item.server, kind: item.kind, definition });
        held.add(item.name);
      }
      if (dirty.length) void save(dirty);
      scheduleRecheck();
      return held;
    },
    onRelease(listener) {
      releaseListeners.push(listener);
      scheduleRecheck();
    },
    written: () => saving,
    async beforeCall(call) {
      // Pinning for the scan alone: only a tool held back has anything to judge (the rest of the calls pay one lookup).
      if (!call.definition || (!changes && !withheld.has(call.name))) return;
      // The model may see the approved definition of a tool held back: the call is judged by the one its server lists now.
      const held = withheld.get(call.name);
      const definition = held?.definition ?? call.definition;
      const dirty: string[] = [];
      let verdict = judge(call.name, call.server, definition, dirty, held?.scan);
      if (!verdict.ok && book) {
        // The user may have approved it since (codemux approve, or another instance): read the pins again first.
        await saving;
        pins = await book.load();
        dirty.length = 0;
        verdict = judge(call.name, call.server, definition, dirty, held?.scan);
        if (verdict.ok && held) release();
      }
      if (dirty.length) await save(dirty);
      if (verdict.ok) return;
      call.logField("quarantined", true);
      metrics?.increment("codemux_quarantined_calls_total", { server: call.server });
      return { action: "abort", error: new PluginRefusedError("pin", verdict.reason, { code: "QUARANTINED" }) };
    },
    async close() {
      clearTimeout(recheck);
      recheck = undefined;
      releaseListeners.length = 0;
      await saving;
    },
  };
}
