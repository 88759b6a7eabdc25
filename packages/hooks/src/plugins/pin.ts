import type { Logger, ScanFinding, ScanVerdict } from "@codemux/core";
import { isAbsolute, join, resolve } from "node:path";
import { PluginRefusedError } from "../errors";
import { filePinBook, sharedPinBook, type PinBook } from "../pin-book";
import { hashDefinition, keptDefinition, type PinFile, type PinRecord } from "../pin-store";
import type { BeforeCallResult, Plugin, PluginCall, PluginInitContext, PluginMetrics, ToolInfo } from "../types";
import { type HashedDefinition, judge, type Judging, type Verdict } from "./pin-judge";

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

/** The pin file a config file names (`plugins.pin.file`), else the default; for `codemux approve`. */
export function pinFileOfConfig(options: { config: unknown; configDir: string; dataDir: string }): string {
  const section = (options.config as { plugins?: { pin?: { file?: unknown } } } | undefined)?.plugins?.pin;
  const file = typeof section?.file === "string" ? section.file : undefined;
  return pinFilePath({ file, configDir: options.configDir, dataDir: options.dataDir });
}

/**
 * `pin`: the hash of every tool's definition is recorded on first sight (on its first call, or
 * when the host reports the catalog with `see`); a later change quarantines the tool until
 * `codemux approve SERVER[__TOOL]`. Fail-closed.
 */
export function pinPlugin(
  options: PinOptions = {},
): Plugin & PinScreen & { see(tools: readonly SeenTool[]): Promise<void>; readonly book: PinBook | undefined } {
  const guard = new PinGuard(options);
  return {
    name: "pin",
    priority: 850,
    failClosed: true,
    get book() {
      return guard.book;
    },
    init: (ctx) => guard.init(ctx),
    see: (tools) => guard.see(tools),
    screen: (tools) => guard.screen(tools),
    holdItems: (scope, flagged) => guard.holdItems(scope, flagged),
    onRelease: (listener) => guard.onRelease(listener),
    written: () => guard.written(),
    beforeCall: (call) => guard.beforeCall(call),
    close: () => guard.close(),
  };
}

/** One definition as the pin book judges it: whose it is, and the scanner's verdict on it when there is one. */
type Judged = { name: string; server: string; definition: ToolInfo; scan: SeenTool["scan"] };

/**
 * The pin plugin's state: the pin book and the pins as last read, the tools and items held back from
 * the model, and the listeners told when one may be shown again (see `pinPlugin`).
 */
class PinGuard {
  book: PinBook | undefined;
  readonly #options: PinOptions;
  readonly #changes: boolean;
  #pins: PinFile = { version: 1, tools: {} };
  #clock: () => number = Date.now;
  #logger: Logger | undefined;
  #metrics: PluginMetrics | undefined;
  #saving: Promise<void> = Promise.resolve();
  // A definition object stays the same until its server lists tools again: hash it (and copy what is kept of it) once.
  readonly #hashes = new WeakMap<object, HashedDefinition>();
  /** Tools held back from the model, by name: the definition the server lists now (what a call of it is judged by). */
  readonly #withheld = new Map<string, { server: string; definition: ToolInfo; scan: SeenTool["scan"] }>();
  /** Items held back from the model, by name: the definition listed now, which an approval must name. */
  readonly #withheldItems = new Map<string, { server: string; kind: HeldItemKind; definition: ToolInfo }>();
  readonly #releaseListeners: Array<() => void> = [];
  #recheck: NodeJS.Timeout | undefined;

  constructor(options: PinOptions) {
    this.#options = options;
    this.#changes = options.changes !== false;
  }

  async init(ctx: PluginInitContext): Promise<void> {
    this.#clock = ctx.clock;
    this.#logger = ctx.logger;
    this.#metrics = ctx.metrics;
    // With a shared table (Redis) every instance pins and approves the same records; else the pin file.
    this.book = ctx.pinRecords
      ? sharedPinBook(ctx.pinRecords)
      : filePinBook(pinFilePath({ file: this.#options.file, configDir: ctx.configDir, dataDir: ctx.dataDir }));
    this.#pins = await this.book.load();
  }

  #hashOf(definition: ToolInfo): HashedDefinition {
    let hashed = this.#hashes.get(definition);
    if (!hashed) {
      const kept = keptDefinition(definition);
      hashed = { ...hashDefinition(definition), kept: kept ? { definition: kept } : {} };
      this.#hashes.set(definition, hashed);
    }
    return hashed;
  }

  /** Records the definition; the verdict for a call of it. */
  #judge({ name, server, definition, scan }: Judged, dirty: string[]): Verdict {
    const judging: Judging = {
      pins: this.#pins,
      scan: this.#options.scan === true,
      changes: this.#changes,
      quarantineNewServers: this.#options.quarantineNewServers === true,
      now: () => new Date(this.#clock()).toISOString(),
    };
    return judge(judging, { name, server, hashed: this.#hashOf(definition), scan }, dirty);
  }

  /** Writes the records of these tools over the book's current content, but keeps an approval of what this one saw pending. */
  #save(names: string[]): Promise<void> {
    const records = Object.fromEntries(names.map((n) => [n, this.#pins.tools[n]]));
    this.#saving = this.#saving.then(async () => {
      if (!this.book) return;
      try {
        this.#pins = await this.book.update(names, (name, current) => {
          const mine = records[name];
          // Another process approved the very definition this one holds pending since this one read it: the approval stands.
          if (!mine || (current?.hash !== undefined && current.hash === mine.pending?.hash)) return undefined;
          // The book already holds this pending definition, maybe with an admin's "keep blocked": that decision stands too.
          if (mine.pending && current?.pending?.hash === mine.pending.hash) return undefined;
          return mine;
        });
      } catch (error) {
        this.#logger?.warn(`pin: ${(error as Error).message}`);
      }
    });
    return this.#saving;
  }

  #release(): void {
    for (const listener of this.#releaseListeners) listener();
  }

  /** While some tool is withheld, reads the pins again now and then: an approval made elsewhere releases it without a call. */
  #scheduleRecheck(): void {
    const book = this.book;
    if (this.#recheck || (this.#withheld.size === 0 && this.#withheldItems.size === 0) || !book || this.#releaseListeners.length === 0) return;
    this.#recheck = setTimeout(async () => {
      this.#recheck = undefined;
      try {
        await this.#saving;
        const fresh = await book.load();
        const freed = [...this.#withheld, ...this.#withheldItems].some(([name, w]) => {
          const record = fresh.tools[name];
          return record?.hash === this.#hashOf(w.definition).hash && !record.pending;
        });
        this.#pins = fresh;
        if (freed) this.#release();
      } catch (error) {
        this.#logger?.warn(`pin: ${(error as Error).message}`);
      }
      this.#scheduleRecheck();
    }, this.#options.recheckMs ?? 2_000);
    this.#recheck.unref();
  }

  async see(tools: readonly SeenTool[]): Promise<void> {
    const dirty: string[] = [];
    // A withheld tool was judged by `screen` on the definition its server lists; the catalog may show the approved one instead.
    for (const t of tools)
      if (!this.#withheld.has(t.qualifiedName)) this.#judge({ name: t.qualifiedName, server: t.server, definition: t.tool, scan: t.scan }, dirty);
    if (dirty.length) await this.#save(dirty);
  }

  screen(tools: readonly SeenTool[]): Withheld {
    const dirty: string[] = [];
    const held: Withheld = new Map();
    const servers = new Set(tools.map((t) => t.server));
    for (const [name, w] of this.#withheld) if (servers.has(w.server)) this.#withheld.delete(name);
    for (const t of tools) {
      if (this.#judge({ name: t.qualifiedName, server: t.server, definition: t.tool, scan: t.scan }, dirty).ok) continue;
      this.#withheld.set(t.qualifiedName, { server: t.server, definition: t.tool, scan: t.scan });
      const record = this.#pins.tools[t.qualifiedName];
      // A changed tool shows its approved definition (its name is what was approved); else nothing of it reaches the model.
      held.set(t.qualifiedName, record?.hash !== undefined && record.definition?.name === t.tool.name ? (record.definition as ToolInfo) : undefined);
    }
    if (dirty.length) void this.#save(dirty);
    this.#scheduleRecheck();
    return held;
  }

  holdItems(scope: { server: string; kind: HeldItemKind; complete: boolean }, flagged: readonly SeenItem[]): ReadonlySet<string> {
    const held = new Set<string>();
    if (this.#options.scan !== true) return held;
    const dirty: string[] = [];
    const names = new Set(flagged.map((f) => f.name));
    for (const [name, w] of this.#withheldItems) if (w.server === scope.server && w.kind === scope.kind && !names.has(name)) this.#withheldItems.delete(name);
    if (scope.complete) this.#forgetUnflagged(scope, names, dirty);
    for (const item of flagged) {
      const definition = item.definition as unknown as ToolInfo;
      if (this.#judge({ name: item.name, server: item.server, definition, scan: item.scan }, dirty).ok) continue;
      const record = this.#pins.tools[item.name];
      if (record && record.kind !== item.kind) {
        record.kind = item.kind;
        if (!dirty.includes(item.name)) dirty.push(item.name);
      }
      this.#withheldItems.set(item.name, { server: item.server, kind: item.kind, definition });
      held.add(item.name);
    }
    if (dirty.length) void this.#save(dirty);
    this.#scheduleRecheck();
    return held;
  }

  /** What waited of this kind and is no longer flagged as listed now (changed or gone) waits no more: the next flag asks afresh. */
  #forgetUnflagged(scope: { server: string; kind: HeldItemKind }, flagged: ReadonlySet<string>, dirty: string[]): void {
    for (const [name, record] of Object.entries(this.#pins.tools)) {
      if (record.kind !== scope.kind || record.server !== scope.server || !record.pending || flagged.has(name)) continue;
      // Kept without `pending` (a record the book can write; a flag of it later asks afresh).
      delete record.pending;
      dirty.push(name);
    }
  }

  onRelease(listener: () => void): void {
    this.#releaseListeners.push(listener);
    this.#scheduleRecheck();
  }

  written(): Promise<void> {
    return this.#saving;
  }

  beforeCall(call: PluginCall): BeforeCallResult | undefined | Promise<BeforeCallResult | undefined> {
    // Pinning for the scan alone: only a tool held back has anything to judge (the rest of the calls pay one lookup).
    if (!call.definition || (!this.#changes && !this.#withheld.has(call.name))) return;
    // The model may see the approved definition of a tool held back: the call is judged by the one its server lists now.
    const held = this.#withheld.get(call.name);
    const seen = { name: call.name, server: call.server, definition: held?.definition ?? call.definition, scan: held?.scan };
    const dirty: string[] = [];
    const verdict = this.#judge(seen, dirty);
    // A pinned definition that has not changed answers at once: the chain then waits no turn and sets no timer for it.
    if (verdict.ok && dirty.length === 0) return;
    return this.#beforeCallRead(call, seen, { verdict, dirty });
  }

  /** The rest of `beforeCall` when a pin must be written or read again. */
  async #beforeCallRead(call: PluginCall, seen: Judged, first: { verdict: Verdict; dirty: string[] }): Promise<BeforeCallResult | undefined> {
    const held = this.#withheld.has(call.name);
    let { verdict } = first;
    const { dirty } = first;
    if (!verdict.ok && this.book) {
      // The user may have approved it since (codemux approve, or another instance): read the pins again first.
      await this.#saving;
      this.#pins = await this.book.load();
      dirty.length = 0;
      verdict = this.#judge(seen, dirty);
      if (verdict.ok && held) this.#release();
    }
    if (dirty.length) await this.#save(dirty);
    if (verdict.ok) return;
    call.logField("quarantined", true);
    this.#metrics?.increment("codemux_quarantined_calls_total", { server: call.server });
    return { action: "abort", error: new PluginRefusedError("pin", verdict.reason, { code: "QUARANTINED" }) };
  }

  async close(): Promise<void> {
    clearTimeout(this.#recheck);
    this.#recheck = undefined;
    this.#releaseListeners.length = 0;
    await this.#saving;
  }
}
