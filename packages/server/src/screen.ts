import {
  type Logger,
  qualifiedToolName,
  sanitizeModelText,
  SCAN_LIMITS,
  type ScanFinding,
  type ScanInput,
  type ScanOtherServer,
  type ScanVerdict,
  scanDefinitions,
  scanSkillText,
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

/** What a server lists besides tools, whose texts reach the model: resources, resource templates, prompts and skills (their names and descriptions). */
export type ItemKind = "resources" | "resourceTemplates" | "prompts" | "skills";

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

/** What the pin book calls a held item, as `codemux approve` names it: `server:instructions`, `server:prompt:NAME`, `server:resource:URI`... */
export type HeldItemKind = "instructions" | "resource" | "resourceTemplate" | "prompt" | "skill" | "skillFile";

/** A server's instructions, resource, resource template, prompt or skill the scan flagged, as the pin book judges it. */
export interface ScreenedItem {
  /** Its name in the pin book (see `heldItemName`). */
  name: string;
  server: string;
  kind: HeldItemKind;
  /** What the server lists (the instructions as `{ instructions }`): an approval covers this very text. */
  definition: Record<string, unknown>;
  scan: { verdict: ScanVerdict; findings: readonly ScanFinding[] };
}

/**
 * Judges the items of one server and kind the scan flags (the pin book's approvals): the names held back. `complete`
 * when `flagged` is every flagged item of that kind as the server lists it now (the book may drop what no longer waits).
 */
export type ItemGate = (scope: { server: string; kind: HeldItemKind; complete: boolean }, flagged: readonly ScreenedItem[]) => ReadonlySet<string>;

/** The pin book's name of a server's instructions or of one of its listed items (a tool's is `server__tool`, which never holds ":"). */
export function heldItemName(server: string, kind: HeldItemKind, id?: string): string {
  return kind === "instructions" ? `${server}:instructions` : `${server}:${kind}:${id ?? ""}`;
}

const HELD_KIND: Record<ItemKind, HeldItemKind> = { resources: "resource", resourceTemplates: "resourceTemplate", prompts: "prompt", skills: "skill" };

export interface ToolScreenOptions {
  mode: ScanMode;
  logger: Logger;
  /** The pin plugin's judgement; without it, quarantine holds back every flagged tool (with no way to approve it). */
  gate?: ScreenGate | undefined;
  /** The pin plugin's judgement of flagged instructions, resources, prompts and skills; without it they are held until the server changes them. */
  itemGate?: ItemGate | undefined;
}

/** Owners (server and principal) whose own instance's held items are remembered; past this many the memory starts afresh. */
const OWNERS = 10_000;

interface Scanned {
  verdict: ScanVerdict;
  findings: ScanFinding[];
}

const CLEAN: Scanned = { verdict: "clean", findings: [] };

/** One listed item as the scanner reads it: a skill as the resource its SKILL.md is (its URI, name and description). */
function scanInputOf(kind: ItemKind, item: object): Omit<ScanInput, "server"> {
  if (kind !== "skills") return { [kind]: [item] };
  const { uri, name, description } = item as { uri?: string; name?: string; description?: string };
  return { resources: [{ uri, name, description }] };
}

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
  #itemGate: ItemGate | undefined;
  readonly #logger: Logger;
  readonly #cache = new Map<string, Scanned>();
  /** Each server's tools as it last listed them, to screen again after an approval. */
  readonly #listed = new Map<string, ToolDefinition[]>();
  readonly #instructions = new Map<string, { text: string; definition: { instructions: string }; scan: Scanned | undefined }>();
  /** Principals' own instances (per-principal credentials), by server and principal: `listed:KIND` once a kind was listed, `held:KIND ID` per held item (apart, so that an empty id is never the marker). */
  readonly #ownHeld = new Map<string, Set<string>>();
  readonly #reports = new Map<string, ServerScan>();

  constructor(options: ToolScreenOptions) {
    this.#mode = options.mode;
    this.#gate = options.gate;
    this.#itemGate = options.itemGate;
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
   * the scan rates it `high` or worse, until an admin approves that very text (the item gate; without one, until the
   * server changes it). `owner` (a principal) for a principal's own instance's list, which is screened alike and
   * remembered for that principal's reads, but is not what the admin's report shows of the server.
   */
  items<T extends object>(server: string, list: { kind: ItemKind; items: readonly T[]; owner?: string | undefined }): T[] {
    const { kind, items, owner } = list;
    const others = this.#mode === "off" ? [] : this.#others(server);
    const scanned = items.map((item) => {
      const scan = this.#mode === "off" ? CLEAN : this.#scanItem(server, scanInputOf(kind, item), others);
      const { uri, uriTemplate, name } = item as { uri?: unknown; uriTemplate?: unknown; name?: unknown };
      const id = String((kind === "prompts" ? name : (uri ?? uriTemplate ?? name)) ?? "").slice(0, 300);
      return { item, scan, id, name: heldItemName(server, HELD_KIND[kind], id) };
    });
    const flagged = scanned.filter((s) => this.#flagged(s.scan));
    const held = this.#itemGate
      ? this.#itemGate(
          { server, kind: HELD_KIND[kind], complete: owner === undefined },
          flagged.map((s) => ({ name: s.name, server, kind: HELD_KIND[kind], definition: s.item as Record<string, unknown>, scan: s.scan })),
        )
      : new Set(flagged.map((s) => s.name));
    const shown: T[] = [];
    const reported: ItemScan[] = [];
    for (const { item, scan, id, name } of scanned) {
      const isHeld = held.has(name);
      if (!isHeld) shown.push(sanitizeDefinition(item));
      if (!verdictAtLeast(scan.verdict, "warn")) continue;
      reported.push({ kind, id, verdict: scan.verdict, findings: scan.findings, held: isHeld });
      if (owner === undefined) this.#logItemOnce(server, { scan: reported.at(-1) as ItemScan, item, name });
    }
    if (owner !== undefined) {
      if (this.#ownHeld.size >= OWNERS) this.#ownHeld.clear();
      const key = `${server}\n${owner}`;
      const known = [...(this.#ownHeld.get(key) ?? [])].filter((k) => k !== `listed:${kind}` && !k.startsWith(`held:${kind} `));
      this.#ownHeld.set(key, new Set([...known, `listed:${kind}`, ...reported.filter((l) => l.held).map((l) => `held:${kind} ${l.id}`)]));
      return shown;
    }
    const report = this.#reports.get(server) ?? { server, verdict: "clean", instructions: undefined, tools: [], items: [] };
    report.items = [...report.items.filter((l) => l.kind !== kind), ...reported];
    report.verdict = verdictOf(report);
    this.#reports.set(server, report);
    return shown;
  }

  /**
   * Whether a resource or prompt is held back from the model, as its server lists it now (a read or get of one is
   * refused); with `owner`, as that principal's own instance listed it too. Undefined when that owner's instance has
   * not listed that kind yet (list it first).
   */
  holds(server: string, { kind, id }: { kind: ItemKind; id: string }, owner?: string): boolean | undefined {
    if (this.#reports.get(server)?.items.some((l) => l.kind === kind && l.id === id && l.held)) return true;
    if (owner === undefined) return false;
    const own = this.#ownHeld.get(`${server}\n${owner}`);
    if (!own?.has(`listed:${kind}`)) return undefined;
    return own.has(`held:${kind} ${id}`);
  }

  /**
   * The server's instructions as the model is shown them: without hidden characters, and none while the scan holds
   * them back (until an admin approves that text, with the item gate).
   */
  instructions(server: string, text: string | undefined): string | undefined {
    if (text === undefined) return undefined;
    let entry = this.#instructions.get(server);
    if (entry?.text !== text) {
      const report = this.#mode === "off" ? undefined : scanDefinitions({ server, instructions: text }, { otherServers: this.#others(server) });
      entry = { text, definition: { instructions: text }, scan: report ? { verdict: report.verdict, findings: report.findings } : undefined };
      this.#instructions.set(server, entry);
      if (report && verdictAtLeast(report.verdict, "warn"))
        this.#logger.warn(
          `[${server}] the scan found ${describe(report.findings)} in its instructions${
            this.#flagged(report) ? `; the model is not shown them until approved (codemux approve ${heldItemName(server, "instructions")})` : ""
          }`,
        );
    }
    const { scan, definition } = entry;
    const name = heldItemName(server, "instructions");
    const flagged = scan !== undefined && this.#flagged(scan) ? [{ name, server, kind: "instructions" as const, definition, scan }] : [];
    const held = this.#itemGate ? this.#itemGate({ server, kind: "instructions", complete: true }, flagged).has(name) : flagged.length > 0;
    const report = this.#reports.get(server) ?? { server, verdict: "clean", instructions: undefined, tools: [], items: [] };
    report.instructions = scan ? { verdict: scan.verdict, findings: scan.findings, held } : undefined;
    report.verdict = verdictOf(report);
    this.#reports.set(server, report);
    return held ? undefined : sanitizeModelText(text);
  }

  /**
   * A downstream skill's file (its `SKILL.md`, or a file of it) as the model is shown it: scanned by the skill rules
   * (`SKILL_RULES`: instructions are what a skill is; secrets, exfiltration, another server's tools and hidden
   * characters are not), without hidden characters whatever the mode, and `held` under "quarantine" when the scan
   * rates it `high` or worse, until an admin approves that text (`codemux approve server:skillFile:URI`).
   */
  skillFile(server: string, file: { uri: string; text: string }): { text: string; held: boolean; name: string; findings: ScanFinding[] } {
    const name = heldItemName(server, "skillFile", file.uri.slice(0, 300));
    if (this.#mode === "off") return { text: sanitizeModelText(file.text), held: false, name, findings: [] };
    const scan = this.#scanSkill(server, { name: file.uri, text: file.text }, this.#others(server));
    const definition = { uri: file.uri, text: file.text };
    const flagged = this.#flagged(scan) ? [{ name, server, kind: "skillFile" as const, definition, scan }] : [];
    const held = this.#itemGate ? this.#itemGate({ server, kind: "skillFile", complete: false }, flagged).has(name) : flagged.length > 0;
    if (verdictAtLeast(scan.verdict, "warn")) {
      const key = `${name} ${hashOf(file.text)} ${held}`;
      if (!this.#logged.has(key)) {
        if (this.#logged.size >= CACHE_ENTRIES) this.#logged.clear();
        this.#logged.add(key);
        this.#logger.warn(
          `[${server}] the scan found ${describe(scan.findings)} in its skill file ${JSON.stringify(file.uri.slice(0, 200))}${
            held ? `; the model is not shown it until approved (codemux approve ${JSON.stringify(name)})` : ""
          }`,
        );
      }
    }
    return { text: sanitizeModelText(file.text), held, name, findings: scan.findings };
  }

  /**
   * A skill codemux saves (save_skill: its description and code, written by the model, read later by it and, for a
   * project's, by others): scanned by the skill rules, with no other server to shadow (a saved skill composes them).
   * `refused` under "quarantine" when the scan rates it `high` or worse (the skill is not saved); the text without
   * hidden characters otherwise.
   */
  savedSkill(skill: { name: string; description?: string | undefined; code: string }): {
    refused: boolean;
    findings: ScanFinding[];
    description?: string;
    code: string;
  } {
    const clean = {
      ...(skill.description === undefined ? {} : { description: sanitizeModelText(skill.description) }),
      code: sanitizeModelText(skill.code),
    };
    if (this.#mode === "off") return { refused: false, findings: [], ...clean };
    const text = `${skill.description ?? ""}\n${skill.code}`;
    const scan = this.#scanSkill("skills", { name: skill.name, text }, []);
    if (verdictAtLeast(scan.verdict, "warn")) this.#logger.warn(`[skills] the scan found ${describe(scan.findings)} in the skill "${skill.name}" being saved`);
    return { refused: this.#flagged(scan), findings: scan.findings, ...clean };
  }

  #scanSkill(server: string, text: { name: string; text: string }, others: readonly ScanOtherServer[]): Scanned {
    const key = hashOf(JSON.stringify(["skill", server, others, text.name, text.text]) ?? "");
    let scanned = this.#cache.get(key);
    if (!scanned) {
      scanned = scanSkillText({ server, ...text }, { otherServers: others });
      if (this.#cache.size >= CACHE_ENTRIES) this.#cache.clear();
      this.#cache.set(key, scanned);
    }
    return scanned;
  }

  /** A server gone from the config. */
  forget(server: string): void {
    this.#listed.delete(server);
    this.#reports.delete(server);
    this.#instructions.delete(server);
    for (const key of this.#ownHeld.keys()) if (key.startsWith(`${server}\n`)) this.#ownHeld.delete(key);
  }

  /** Every server's tools as they were last listed, to screen again (after an approval, or a changed mode or gate). */
  listed(): Array<[string, ToolDefinition[]]> {
    return [...this.#listed];
  }

  /** A config reload: the mode, and the pin plugin's judgement (a reload may turn pin on or off). */
  update(options: { mode: ScanMode; gate?: ScreenGate | undefined; itemGate?: ItemGate | undefined }): void {
    if (options.mode !== this.#mode) this.#instructions.clear();
    this.#mode = options.mode;
    this.#gate = options.gate;
    this.#itemGate = options.itemGate;
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

  #logItemOnce(server: string, { scan, item, name }: { scan: ItemScan; item: unknown; name: string }): void {
    const key = `${server} ${scan.kind} ${hashOf(JSON.stringify(item) ?? "")} ${scan.held}`;
    if (this.#logged.has(key)) return;
    if (this.#logged.size >= CACHE_ENTRIES) this.#logged.clear();
    this.#logged.add(key);
    const what = { prompts: "prompt", resources: "resource", resourceTemplates: "resource template", skills: "skill" }[scan.kind];
    this.#logger.warn(
      `[${server}] the scan found ${describe(scan.findings)} in the ${what} ${JSON.stringify(scan.id.slice(0, 200))}${
        scan.held ? `; the model is not shown it and it is refused until approved (codemux approve ${JSON.stringify(name.slice(0, 300))})` : ""
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

/** Why a skill file the scan holds is not shown: its high findings (three at most) and the approval that would show it. */
export function heldSkillFileReason(uri: string, screened: { name: string; findings: readonly ScanFinding[] }): string {
  const found = screened.findings
    .filter((f) => f.severity === "high" || f.severity === "critical")
    .slice(0, 3)
    .map((f) => `${f.rule} (${f.severity})`)
    .join(", ");
  return `codemux's scan found text aimed at the model in ${uri.slice(0, 200)} (${found}); it is not shown until an admin approves it (codemux approve ${screened.name}).`;
}
