import {
  type Logger,
  qualifiedToolName,
  sanitizeModelText,
  SCAN_LIMITS,
  type ScanFinding,
  type ScanInput,
  type ScanOtherServer,
  type ScanPromptDefinition,
  type ScanResourceDefinition,
  type ScanVerdict,
  scanDefinitions,
  type ToolDefinition,
  verdictAtLeast,
} from "@codemux/core";
import { createHash } from "node:crypto";

/** The config's `security.scan`: hold back what the scanner rates `high` or worse until approved, only log it, or scan nothing. */
export type ScanMode = "quarantine" | "warn" | "off";
export const SCAN_MODES: readonly ScanMode[] = ["quarantine", "warn", "off"];

/** A tool as its server lists it now, with the scanner's verdict on it. */
export interface ScreenedTool {
  qualifiedName: string;
  server: string;
  tool: ToolDefinition;
  scan?: { verdict: ScanVerdict; findings: readonly ScanFinding[] };
}

/**
 * Judges a server's tools as listed now (the pin plugin's quarantine): the tools held back, each with what the model
 * may see instead (the definition approved before), or undefined for nothing.
 */
export type ScreenGate = (tools: readonly ScreenedTool[]) => Map<string, { [key: string]: unknown } | undefined>;

export interface ToolScan {
  name: string;
  qualifiedName: string;
  verdict: ScanVerdict;
  findings: ScanFinding[];
  /** Held back from the model: it sees the approved definition (`shown: "approved"`) or nothing of it. */
  held: boolean;
  shown: "listed" | "approved" | "none";
}

/** What a server lists besides tools, whose texts reach the model: resources, resource templates and prompts. */
export type ItemKind = "resources" | "resourceTemplates" | "prompts";

/** A resource, resource template or prompt the scan flagged, and whether the model is kept from it. */
export interface ItemScan {
  kind: ItemKind;
  /** Its URI (or URI template) as the server lists it; a prompt's name. */
  id: string;
  verdict: ScanVerdict;
  findings: ScanFinding[];
  /** Left out of every list the model reads, and refused when asked for (security.scan quarantine). */
  held: boolean;
}

/** What the scanner found in one server's definitions, and what of them the model is shown. */
export interface ServerScan {
  server: string;
  /** The worst verdict of its tools, instructions, resources and prompts. */
  verdict: ScanVerdict;
  instructions: { verdict: ScanVerdict; findings: ScanFinding[]; held: boolean } | undefined;
  tools: ToolScan[];
  /** Its resources, resource templates and prompts that the scan rated `warn` or worse, as last listed. */
  items: ItemScan[];
}

export interface ToolScreenOptions {
  mode: ScanMode;
  logger: Logger;
  /** The pin plugin's judgement; without it, quarantine holds back every flagged tool (with no way to approve it). */
  gate?: ScreenGate | undefined;
}

interface Scanned {
  verdict: ScanVerdict;
  findings: ScanFinding[];
}

const CLEAN: Scanned = { verdict: "clean", findings: [] };

/** Verdicts kept by definition hash; past this many the cache starts afresh (a catalog of thousands of tools stays inside). */
const CACHE_ENTRIES = 20_000;

/**
 * What the model is shown of the downstream servers' definitions: every tool and the server's instructions are
 * scanned when listed (a verdict is kept by the definition's hash, so an unchanged definition is not scanned again),
 * hidden characters are removed from their text whatever the mode, and a tool held back (flagged by the scan
 * under "quarantine", or changed since it was pinned) is replaced by its approved definition or left out. Runs at
 * discovery and on every change, never on a call.
 */
export class ToolScreen {
  #mode: ScanMode;
  #gate: ScreenGate | undefined;
  readonly #logger: Logger;
  readonly #cache = new Map<string, Scanned>();
  /** Each server's tools as it last listed them, to screen again after an approval. */
  readonly #listed = new Map<string, ToolDefinition[]>();
  readonly #instructions = new Map<string, { text: string; shown: string | undefined; scan: ServerScan["instructions"] }>();
  readonly #reports = new Map<string, ServerScan>();

  constructor(options: ToolScreenOptions) {
    this.#mode = options.mode;
    this.#gate = options.gate;
    this.#logger = options.logger;
  }

  get mode(): ScanMode {
    return this.#mode;
  }

  /** The tools of `server` as the model is shown them. */
  tools(server: string, listed: readonly ToolDefinition[], options: { cached?: boolean } = {}): ToolDefinition[] {
    this.#listed.set(server, [...listed]);
    const others = this.#mode === "off" ? [] : this.#others(server);
    const screened: ScreenedTool[] = listed.map((tool) => {
      const scan = this.#mode === "off" ? undefined : this.#scan(server, tool, others);
      return { qualifiedName: qualifiedToolName(server, tool.name), server, tool: sanitizeDefinition(tool), ...(scan ? { scan } : {}) };
    });
    // The cache holds what was shown (an approved definition in place of a changed one): the pins judge only what a server lists.
    const held = this.#gate && !options.cached ? this.#gate(screened) : this.#holdFlagged(screened);
    const shown: ToolDefinition[] = [];
    const before = this.#reports.get(server);
    const report: ServerScan = { server, verdict: "clean", instructions: before?.instructions, tools: [], items: before?.items ?? [] };
    for (const t of screened) {
      let show: ToolDefinition | undefined = t.tool;
      if (held.has(t.qualifiedName)) {
        const approved = held.get(t.qualifiedName) as ToolDefinition | undefined;
        // The approved definition is shown only if the scan would let it through itself.
        show = approved && !this.#flagged(this.#scan(server, approved, others)) ? sanitizeDefinition(approved) : undefined;
      }
      if (show) shown.push(show);
      const verdict = t.scan?.verdict ?? "clean";
      report.verdict = worse(report.verdict, verdict);
      report.tools.push({
        name: t.tool.name,
        qualifiedName: t.qualifiedName,
        verdict,
        findings: [...(t.scan?.findings ?? [])],
        held: held.has(t.qualifiedName),
        shown: !held.has(t.qualifiedName) ? "listed" : show ? "approved" : "none",
      });
      if (this.#mode !== "off" && verdictAtLeast(verdict, "warn")) this.#logOnce(t, held.has(t.qualifiedName));
    }
    report.verdict = verdictOf(report);
    this.#reports.set(server, report);
    return shown;
  }

  /**
   * A server's resources, resource templates or prompts as the model is shown them: each scanned as its tools are
   * (a verdict kept by its hash), without hidden characters whatever the mode, and left out under "quarantine" when
   * the scan rates it `high` or worse (no approval brings one back: the server must change it). `report` false for a
   * principal's own instance's list, which is screened alike but not what the admin's report shows of the server.
   */
  items<T extends ScanResourceDefinition | ScanPromptDefinition>(server: string, list: { kind: ItemKind; items: readonly T[]; report?: boolean }): T[] {
    const { kind, items } = list;
    const others = this.#mode === "off" ? [] : this.#others(server);
    const shown: T[] = [];
    const flagged: ItemScan[] = [];
    for (const item of items) {
      const scan = this.#mode === "off" ? CLEAN : this.#scanItem(server, { [kind]: [item] }, others);
      const held = this.#flagged(scan);
      if (!held) shown.push(sanitizeDefinition(item));
      if (!verdictAtLeast(scan.verdict, "warn")) continue;
      const id = String((kind === "prompts" ? item.name : (item.uri ?? item.uriTemplate ?? item.name)) ?? "").slice(0, 300);
      flagged.push({ kind, id, verdict: scan.verdict, findings: scan.findings, held });
      if (list.report !== false) this.#logItemOnce(server, flagged.at(-1) as ItemScan, item);
    }
    if (list.report !== false) {
      const report = this.#reports.get(server) ?? { server, verdict: "clean", instructions: undefined, tools: [], items: [] };
      report.items = [...report.items.filter((l) => l.kind !== kind), ...flagged];
      report.verdict = verdictOf(report);
      this.#reports.set(server, report);
    }
    return shown;
  }

  /** Whether a resource or prompt is held back from the model, as its server lists it now (a read or get of one is refused). */
  holds(server: string, kind: ItemKind, id: string): boolean {
    return this.#reports.get(server)?.items.some((l) => l.kind === kind && l.id === id && l.held) ?? false;
  }

  /** The server's instructions as the model is shown them: without hidden characters, and none while the scan holds them back. */
  instructions(server: string, text: string | undefined): string | undefined {
    if (text === undefined) return undefined;
    const known = this.#instructions.get(server);
    if (known?.text === text) return known.shown;
    const scan = this.#mode === "off" ? undefined : scanDefinitions({ server, instructions: text }, { otherServers: this.#others(server) });
    const held = scan !== undefined && this.#mode === "quarantine" && verdictAtLeast(scan.verdict, "high");
    const entry = {
      text,
      shown: held ? undefined : sanitizeModelText(text),
      scan: scan ? { verdict: scan.verdict, findings: scan.findings, held } : undefined,
    };
    this.#instructions.set(server, entry);
    const report = this.#reports.get(server) ?? { server, verdict: "clean", instructions: undefined, tools: [], items: [] };
    report.instructions = entry.scan;
    report.verdict = verdictOf(report);
    this.#reports.set(server, report);
    if (scan && verdictAtLeast(scan.verdict, "warn"))
      this.#logger.warn(
        `[${server}] the scan found ${describe(scan.findings)} in its instructions${held ? "; the model is not shown them (security.scan quarantine)" : ""}`,
      );
    return entry.shown;
  }

  /** A server gone from the config. */
  forget(server: string): void {
    this.#listed.delete(server);
    this.#reports.delete(server);
    this.#instructions.delete(server);
  }

  /** Every server's tools as they were last listed, to screen again (after an approval, or a changed mode or gate). */
  listed(): Array<[string, ToolDefinition[]]> {
    return [...this.#listed];
  }

  /** A config reload: the mode, and the pin plugin's judgement (a reload may turn pin on or off). */
  update(options: { mode: ScanMode; gate?: ScreenGate | undefined }): void {
    if (options.mode !== this.#mode) this.#instructions.clear();
    this.#mode = options.mode;
    this.#gate = options.gate;
  }

  /** Every server's verdict, in name order. */
  reports(): ServerScan[] {
    return [...this.#reports.values()].sort((a, b) => a.server.localeCompare(b.server));
  }

  report(server: string): ServerScan | undefined {
    return this.#reports.get(server);
  }

  #flagged(scan: { verdict: ScanVerdict } | undefined): boolean {
    return this.#mode === "quarantine" && verdictAtLeast(scan?.verdict, "high");
  }

  #holdFlagged(tools: readonly ScreenedTool[]): Map<string, undefined> {
    return new Map(tools.filter((t) => this.#flagged(t.scan)).map((t) => [t.qualifiedName, undefined]));
  }

  /** The other servers, for the shadowing rule: names and tool names. */
  #others(server: string): ScanOtherServer[] {
    return [...this.#listed]
      .filter(([name]) => name !== server)
      .map(([name, tools]) => ({ name, tools: tools.map((t) => t.name) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  #scan(server: string, tool: ToolDefinition, others: readonly ScanOtherServer[]): Scanned {
    // The other servers' tool names belong in the key: text naming one of them is shadowing only once it is there.
    const key = hashOf(JSON.stringify([server, others, tool]) ?? "");
    let scanned = this.#cache.get(key);
    if (!scanned) {
      const report = scanDefinitions({ server, tools: [tool] }, { otherServers: others });
      scanned = { verdict: report.verdict, findings: report.findings };
      if (this.#cache.size >= CACHE_ENTRIES) this.#cache.clear();
      this.#cache.set(key, scanned);
    }
    return scanned;
  }

  /** One resource, template or prompt (`item` holds its list's one entry), scanned or its verdict remembered. */
  #scanItem(server: string, item: Omit<ScanInput, "server">, others: readonly ScanOtherServer[]): Scanned {
    const key = hashOf(JSON.stringify([server, others, item]) ?? "");
    let scanned = this.#cache.get(key);
    if (!scanned) {
      const report = scanDefinitions({ server, ...item }, { otherServers: others });
      scanned = { verdict: report.verdict, findings: report.findings };
      if (this.#cache.size >= CACHE_ENTRIES) this.#cache.clear();
      this.#cache.set(key, scanned);
    }
    return scanned;
  }

  #logItemOnce(server: string, scan: ItemScan, item: unknown): void {
    const key = `${server} ${scan.kind} ${hashOf(JSON.stringify(item) ?? "")} ${scan.held}`;
    if (this.#logged.has(key)) return;
    if (this.#logged.size >= CACHE_ENTRIES) this.#logged.clear();
    this.#logged.add(key);
    const what = scan.kind === "prompts" ? "prompt" : scan.kind === "resources" ? "resource" : "resource template";
    this.#logger.warn(
      `[${server}] the scan found ${describe(scan.findings)} in the ${what} ${JSON.stringify(scan.id.slice(0, 200))}${
        scan.held ? "; the model is not shown it and it is refused until the server changes it (security.scan quarantine)" : ""
      }`,
    );
  }

  /** Logs a flagged tool once per definition (a rescreen after an approval does not log it again). */
  readonly #logged = new Set<string>();
  #logOnce(tool: ScreenedTool, held: boolean): void {
    const key = `${tool.qualifiedName} ${hashOf(JSON.stringify(tool.tool) ?? "")} ${held}`;
    if (this.#logged.has(key)) return;
    if (this.#logged.size >= CACHE_ENTRIES) this.#logged.clear();
    this.#logged.add(key);
    this.#logger.warn(
      `[${tool.server}] the scan found ${describe(tool.scan?.findings ?? [])} in ${tool.qualifiedName}${
        held ? `; it is quarantined and the model is not shown its text until approved (codemux approve ${tool.qualifiedName})` : ""
      }`,
    );
  }
}

const SEVERITIES: readonly ScanVerdict[] = ["clean", "info", "warn", "high", "critical"];
const worse = (a: ScanVerdict, b: ScanVerdict): ScanVerdict => (SEVERITIES.indexOf(b) > SEVERITIES.indexOf(a) ? b : a);
/** A server's verdict: the worst of its instructions', tools' and listed items'. */
const verdictOf = (report: ServerScan): ScanVerdict =>
  [report.instructions?.verdict ?? "clean", ...report.tools.map((t) => t.verdict), ...report.items.map((l) => l.verdict)].reduce(worse, "clean");

function describe(findings: readonly ScanFinding[]): string {
  const shown = findings.filter((f) => verdictAtLeast(f.severity, "warn"));
  const listed = shown.slice(0, 3).map((f) => `${f.rule} (${f.severity}) in ${f.path}`);
  return `${listed.join(", ")}${shown.length > 3 ? ` and ${shown.length - 3} more` : ""}`;
}

function hashOf(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}

/** Keys whose string values are text for the model: they lose their hidden characters. Names and values (enum, default) stay as the server needs them. */
const TEXT_KEYS = new Set(["description", "title"]);

/**
 * The definition with hidden characters removed from its descriptions and titles, at any depth (bounded as the
 * scan is); the same object when there were none.
 */
export function sanitizeDefinition<T>(definition: T): T {
  let nodes = 0;
  const walk = (value: unknown, depth: number): unknown => {
    if (depth > SCAN_LIMITS.schemaDepth || ++nodes > SCAN_LIMITS.itemNodes || value === null || typeof value !== "object") return value;
    let copy: Record<string, unknown> | unknown[] | undefined;
    const entries = Array.isArray(value) ? value.entries() : Object.entries(value as Record<string, unknown>);
    for (const [key, child] of entries) {
      const next = typeof child === "string" ? (typeof key === "string" && TEXT_KEYS.has(key) ? sanitizeModelText(child) : child) : walk(child, depth + 1);
      if (next === child) continue;
      copy ??= Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
      (copy as Record<string | number, unknown>)[key] = next;
    }
    return copy ?? value;
  };
  return walk(definition, 0) as T;
}
