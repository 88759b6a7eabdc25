import {
  LOCAL_PRINCIPAL,
  type CallRequest,
  type CatalogEntry,
  type Logger,
  type SecretMask,
  type SessionInfo,
  type Surface,
  type ToolResult,
} from "@codemux/core";
import type { Catalog } from "@codemux/catalog";
import type { LoginCallbacks, PoolConfig, PoolUpdate, ServerStatus } from "@codemux/pool";
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { CodemuxOptions } from "./codemux-options";
import { composeCodemux } from "./compose";
import { maskedStatus } from "./downstream-mask";
import { BadRequestError } from "./errors";
import type { Access } from "./policy/access";
import type { CatalogView } from "./policy/catalog-view";
import type { PolicyConfig } from "./policy/config";
import type { Grant } from "./policy/policies";
import type { ToolCallPipeline } from "./pipeline/pipeline";
import type { Readiness } from "./readiness";
import type { AnswerHints } from "./render/hints";
import type { ClientRelay } from "./relay";
import type { KeptResult, ResultOwner, ResultStore } from "./results";
import type { CodemuxServices } from "./services";
import type { SessionHost } from "./session";
import { forgetResultFiles } from "./surfaces/dispatch-files";
import type { ListedSkill, SkillLibrary } from "./skills/library";
import type { SnippetHost } from "./snippets";
import type { SurfaceFactory } from "./surfaces/surface";
import type { ToolPool } from "./tool-pool";
import type { ItemGate, ScanMode, ScreenGate, ServerScan, ToolScreen } from "./screen";

export type { CodemuxOptions };

/** What `forget` removed, by kind: `{ results: 3, skills: 1, jobs: 2, auditLines: 40 }`. */
export type ForgetReport = Record<string, number>;

/** How far `forget` reaches. */
export interface ForgetOptions {
  /**
   * Also ask the other running instances of a deployment (through its shared store) to forget: true by
   * default. An instance doing what another asked says false, so that the ask is not passed on again.
   */
  elsewhere?: boolean;
}

/** One part of what `forget` deletes (an `onForget` forgetter): counts by kind. */
export type Forgetter = (principal: string, options: Required<ForgetOptions>) => Promise<ForgetReport> | ForgetReport;

/** Calling, as MCP sessions, REST and the CLI do: the surface of a mode, and a session to call in. */
export interface CodemuxCalls {
  readonly mode: string;
  readonly modes: string[];
  surface(name?: string, options?: { hints?: AnswerHints }): Surface;
  session(principal?: string): SessionInfo;
  /** The tool `name` as `session` may call it (in the whole catalog without one); refused (unknown, hidden, denied, server down) as a call would be. */
  resolve(name: string, session?: SessionInfo): Promise<CatalogEntry>;
  /** Runs one call through the whole pipeline (policies, plugins, recorders), as every front end's calls run. */
  call(request: CallRequest): Promise<ToolResult>;
  /** The TypeScript of the `mcp/*` module `specifier` as `session` sees it; undefined when it has none. */
  moduleSource(specifier: string, session: SessionInfo): string | undefined;
  /** Keeps a result too large to answer whole, for its owner alone; its handle and size. */
  keep(tool: string, text: string, owner: ResultOwner): Promise<KeptResult>;
  /** The services as a front end that runs meta-tools itself (REST) gives them, with its hints. */
  servicesFor(hints: AnswerHints): CodemuxServices;
}

/** What is served, to read: the config and policies in force, each server's state, and bounded waits for the servers. */
export interface CodemuxQueries {
  readonly config: PoolConfig;
  readonly policies: PolicyConfig | undefined;
  status(): ServerStatus[];
  ready(timeoutMs?: number): Promise<boolean>;
  settled(timeoutMs?: number): Promise<boolean>;
  /** What masks downstream text outside call results (`CodemuxOptions.mask`): front ends mask what they record with it. */
  readonly mask: SecretMask;
  /** The tools as `session` sees them under the policies; the whole catalog without a session. */
  tools(session?: SessionInfo): CatalogView;
  /** A session's grant under the policies in force; undefined without policies. */
  grant(session: SessionInfo): Grant | undefined;
  /** Whether `session` may know of `server` (its grant shows the server whole or one of its tools); always without policies. */
  knowsServer(session: SessionInfo, server: string): boolean;
  /** The scan's verdicts on what each server lists (what is held back), and the mode it runs in. */
  scanReports(): ServerScan[];
  scanReport(server: string): ServerScan | undefined;
  readonly scanMode: ScanMode;
  /** A principal's saved skills (its own and the shared ones it may use). */
  skills(principal: string): ListedSkill[];
  /** The generated `mcp/servers/*` and `mcp/bridge` modules, as codegen writes them to disk. */
  readonly generatedModules: CodemuxServices["namespace"]["generated"];
  /** Tells `listener` each time the set of tools changes; returns the call that stops it. */
  onToolsChanged(listener: () => void): () => void;
}

/** Administration: apply an edited config, restart one server (undefined when the pool cannot), forget a principal. */
export interface CodemuxAdmin {
  reload(config: PoolConfig): Promise<PoolUpdate>;
  readonly restart: ((server: string) => Promise<void>) | undefined;
  forget(principal: string, options?: ForgetOptions): Promise<ForgetReport>;
  /** Where the servers' per-principal logins come back (a front end's callback route), or undefined to stop. */
  useLoginCallbacks(callbacks: LoginCallbacks | undefined): void;
  /** Screens every server's tools again (an approval, or a reload's new scan mode and gate). */
  rescreen(update?: { mode: ScanMode; gate?: ScreenGate | undefined; itemGate?: ItemGate | undefined }): void;
  /** Reads the shared skills again (before serving, and when the shelf may have changed). */
  refreshSkills(): Promise<void>;
}

/** Lifecycle: start and close, and what else runs at close and at forget. */
export interface CodemuxLifecycle {
  start(options?: { warmSandbox?: boolean }): void;
  close(): Promise<void>;
  onClose(closer: () => Promise<void> | void, options?: { before?: boolean }): void;
  onForget(forgetter: Forgetter, options?: { before?: boolean }): void;
}

/** Every port of one core, for a front end that uses them all (the CLI's commands). */
export type CodemuxPorts = CodemuxCalls & CodemuxQueries & CodemuxAdmin & CodemuxLifecycle;

interface CodemuxEvents {
  /** The set of tools changed (a server connected, dropped or changed its list, or a reload changed the servers). */
  toolsChanged: [];
}

/**
 * The wiring root of codemux: it builds the services (readiness, the module namespace, the snippet
 * host, the call pipeline, the result store, the skills, the MCP features) over one pool, and hands
 * them, not itself, to the surfaces of its modes. Front ends (an MCP session, REST, the CLI) start it,
 * ask it for a surface or a session, and close it.
 *
 * @example
 * const core = new Codemux({ config: await loadConfigFile("codemux.json") });
 * core.start();
 * const answer = await core.surface("code").callTool("search_tools", { query: "read a file" }, { session: core.session(), origin: "cli" });
 * await core.close();
 */
export class Codemux extends EventEmitter<CodemuxEvents> implements CodemuxCalls, CodemuxQueries, CodemuxAdmin, CodemuxLifecycle {
  readonly #options: CodemuxOptions;
  readonly mode: string;
  readonly logger: Logger;
  readonly clock: () => number;
  readonly dataDir: string | undefined;
  readonly pool: ToolPool;
  readonly catalog: Catalog;
  readonly pipeline: ToolCallPipeline;
  /** Routes the servers' sampling, elicitation and roots requests to the client whose call caused them. */
  readonly relay: ClientRelay;
  readonly results: ResultStore;
  readonly readiness: Readiness;
  /** The scanner's verdicts on what the servers list, and what of it the model is shown. */
  readonly scan: ToolScreen;
  /** What each session may see and call, under the config's policies. */
  readonly access: Access;
  /** The session port: what MCP sessions over this core (`createSessionServer`, `serveStdio`, the HTTP server's) are given. */
  readonly sessions: SessionHost;
  /** What surfaces and meta-tools are given (a front end gets them through `servicesFor`). */
  readonly #services: Omit<CodemuxServices, "hints">;
  /** What masks downstream text outside call results (`CodemuxOptions.mask`). */
  readonly mask: SecretMask;
  readonly #snippets: SnippetHost;
  readonly #surfaceFactories: Record<string, SurfaceFactory>;
  readonly #surfaces = new Map<string, Surface>();
  #config: PoolConfig;
  #policies: PolicyConfig | undefined;
  #started = false;
  readonly #closers: Array<() => Promise<void> | void> = [];
  readonly #beforeClose: Array<() => Promise<void> | void> = [];
  readonly #forgetters: Forgetter[] = [];
  readonly #forgettersBefore: Forgetter[] = [];
  readonly #skills: SkillLibrary;

  constructor(options: CodemuxOptions) {
    super();
    this.setMaxListeners(0);
    this.#options = options;
    this.#config = options.config;
    this.#policies = options.policies;
    this.dataDir = options.dataDir;
    const parts = composeCodemux(options, {
      config: () => this.#config,
      surface: (mode) => this.surface(mode),
      status: () => this.status(),
      onToolsChanged: (listener) => this.onToolsChanged(listener),
    });
    this.mode = parts.mode;
    this.logger = parts.logger;
    this.clock = parts.clock;
    this.mask = parts.mask;
    this.#surfaceFactories = parts.surfaceFactories;
    this.relay = parts.relay;
    this.results = parts.results;
    this.pool = parts.pool;
    this.catalog = parts.catalog;
    this.scan = parts.scan;
    this.readiness = parts.readiness;
    this.access = parts.access;
    this.pipeline = parts.pipeline;
    this.#snippets = parts.snippets;
    this.#skills = parts.skills;
    this.#services = parts.services;
    this.sessions = parts.sessions;
    this.readiness.on("toolsChanged", () => this.emit("toolsChanged"));
  }

  /** The ports front ends take: each a narrow view of this core. */
  get calls(): CodemuxCalls {
    return this;
  }

  get queries(): CodemuxQueries {
    return this;
  }

  get admin(): CodemuxAdmin {
    return this;
  }

  get lifecycle(): CodemuxLifecycle {
    return this;
  }

  /** Stops one server and starts it again (its tools listed afresh); undefined when the pool cannot restart one server. */
  get restart(): ((server: string) => Promise<void>) | undefined {
    const pool = this.pool;
    return pool.restart ? (server) => pool.restart?.(server) ?? Promise.resolve() : undefined;
  }

  useLoginCallbacks(callbacks: LoginCallbacks | undefined): void {
    this.pool.useLoginCallbacks?.(callbacks);
  }

  rescreen(update?: { mode: ScanMode; gate?: ScreenGate | undefined; itemGate?: ItemGate | undefined }): void {
    this.readiness.rescreen(update);
    this.#services.features.rescreened();
  }

  refreshSkills(): Promise<void> {
    return this.#skills.refresh();
  }

  resolve(name: string, session?: SessionInfo): Promise<CatalogEntry> {
    return session === undefined ? this.pipeline.resolve(name) : this.pipeline.resolveFor(name, session);
  }

  call(request: CallRequest): Promise<ToolResult> {
    return this.pipeline.call(request);
  }

  moduleSource(specifier: string, session: SessionInfo): string | undefined {
    return this.#services.namespace.source(specifier, session);
  }

  keep(tool: string, text: string, owner: ResultOwner): Promise<KeptResult> {
    return this.results.keep(tool, text, owner);
  }

  servicesFor(hints: AnswerHints): CodemuxServices {
    return { ...this.#services, hints };
  }

  tools(session?: SessionInfo): CatalogView {
    return this.access.catalog(session);
  }

  grant(session: SessionInfo): Grant | undefined {
    return this.access.grant(session);
  }

  knowsServer(session: SessionInfo, server: string): boolean {
    return this.access.servers(session, [server]).length > 0;
  }

  scanReports(): ServerScan[] {
    return this.scan.reports();
  }

  scanReport(server: string): ServerScan | undefined {
    return this.scan.report(server);
  }

  get scanMode(): ScanMode {
    return this.scan.mode;
  }

  skills(principal: string): ListedSkill[] {
    return this.#skills.list(principal);
  }

  get generatedModules(): CodemuxServices["namespace"]["generated"] {
    return this.#services.namespace.generated;
  }

  onToolsChanged(listener: () => void): () => void {
    this.on("toolsChanged", listener);
    return () => this.off("toolsChanged", listener);
  }

  /** The config being served (the last one `reload` applied). */
  get config(): PoolConfig {
    return this.#config;
  }

  /** The policies in force (the last ones `reload` applied), for read-only views such as the admin page; undefined without policies. */
  get policies(): PolicyConfig | undefined {
    return this.#policies;
  }

  /**
   * Applies a changed config while serving: servers added, removed or changed are started, stopped
   * or restarted; unchanged servers keep their connection; clients are told their tool list changed.
   */
  async reload(config: PoolConfig): Promise<PoolUpdate> {
    if (!this.pool.update) throw new BadRequestError("This pool cannot be reloaded; restart codemux to apply the new config.");
    // Read first: a config whose policies are wrong is not applied at all, and the last good one keeps serving.
    const policies = this.#options.reloadPolicies ? await this.#options.reloadPolicies() : undefined;
    const previous = this.#config;
    // Servers restarted by the update ask for their roots while it runs: they must get the new config's.
    this.#config = config;
    let update: PoolUpdate;
    try {
      update = await this.pool.update(config.servers);
    } catch (error) {
      this.#config = previous;
      throw error;
    }
    const policiesChanged = this.#options.reloadPolicies !== undefined && JSON.stringify(policies) !== JSON.stringify(this.#policies);
    if (policiesChanged) {
      this.#policies = policies;
      this.access.update(policies);
    }
    if (policiesChanged || update.added.length + update.removed.length + update.changed.length > 0) this.emit("toolsChanged");
    return update;
  }

  /**
   * Loads the cached catalog, then connects every server in the background. Requests wait only for
   * the server they need; `ready()` waits for all. `warmSandbox` starts a sandbox worker once the
   * servers are up, so the first execute_code does not wait for it.
   */
  start(options: { warmSandbox?: boolean } = {}): void {
    if (this.#started) return;
    this.#started = true;
    const started = this.readiness.start();
    if (options.warmSandbox && this.mode === "code") void started.then(() => this.#snippets.warm());
  }

  /** A new client session (over stdio, the one local user). */
  session(principal = LOCAL_PRINCIPAL): SessionInfo {
    return { id: randomUUID(), principal };
  }

  /** The surface of a mode, made once per core (and per other front end's hints, such as the CLI's). */
  surface(name: string = this.mode, options: { hints?: AnswerHints } = {}): Surface {
    const key = options.hints ? `${name} ${options.hints.findTools}` : name;
    let surface = this.#surfaces.get(key);
    if (!surface) {
      const factory = this.#surfaceFactories[name];
      if (!factory) throw new BadRequestError(`Unknown mode "${name}"; modes: ${Object.keys(this.#surfaceFactories).join(", ")}.`);
      surface = factory({ services: this.#services, metaTools: this.#options.metaTools ?? [], ...(options.hints ? { hints: options.hints } : {}) });
      this.#surfaces.set(key, surface);
    }
    return surface;
  }

  /** The modes this core serves, by name. */
  get modes(): string[] {
    return Object.keys(this.#surfaceFactories);
  }

  /** Waits (bounded) until every server has connected or failed; servers known from the cache do not hold it up. True when all settled in time. */
  ready(timeoutMs?: number): Promise<boolean> {
    return this.readiness.ready(timeoutMs);
  }

  /** Waits (bounded) until every server has connected or failed, cached or not: for one-shot commands that want live servers. */
  settled(timeoutMs?: number): Promise<boolean> {
    return this.readiness.settled(timeoutMs);
  }

  /** Each server's state; what its process wrote (failure reason, stderr, instructions) masked by `mask`. */
  status(): ServerStatus[] {
    return this.pool.status().map((status) => maskedStatus(status, this.mask));
  }

  /**
   * Runs `closer` when the core closes: after its servers and sandbox stop (plugins flushing their
   * files), or with `before: true` while they still run (a job runner recording its jobs as interrupted).
   */
  onClose(closer: () => Promise<void> | void, options: { before?: boolean } = {}): void {
    (options.before ? this.#beforeClose : this.#closers).push(closer);
  }

  /**
   * Adds what else `forget` must delete for a principal (its jobs, its audit lines); returns counts by kind.
   * With `before: true` it runs before the core's own parts (asking the other instances, which hold the
   * principal's results in memory and would count what this one deletes from the shared store again).
   */
  onForget(forgetter: Forgetter, options: { before?: boolean } = {}): void {
    (options.before ? this.#forgettersBefore : this.#forgetters).push(forgetter);
  }

  /**
   * Deletes what codemux holds for `principal`: the results its sessions kept, its skills, the files
   * dispatch's `resultToFile` wrote for it, its own server instances and logins, and whatever `onForget`
   * forgetters hold (jobs and transcripts, audit lines, the admin page's activity, other instances'). Returns what went, by kind.
   */
  async forget(principal: string, options: ForgetOptions = {}): Promise<ForgetReport> {
    const reach = { elsewhere: options.elsewhere ?? true };
    const report: ForgetReport = { results: 0, skills: 0 };
    const add = (counts: ForgetReport) => {
      for (const [kind, count] of Object.entries(counts)) report[kind] = (report[kind] ?? 0) + count;
    };
    for (const forgetter of this.#forgettersBefore) add(await forgetter(principal, reach));
    add({ results: await this.results.forget(principal), skills: await this.#skills.forget(principal) });
    if (this.#options.dispatchFiles?.resultFileDir) add({ resultFiles: await forgetResultFiles(this.#options.dispatchFiles, principal) });
    // Its own server instances and what they kept for it, and its logins: said only when it had some.
    add(Object.fromEntries(Object.entries((await this.pool.forgetPrincipal?.(principal)) ?? {}).filter(([, count]) => count > 0)));
    for (const forgetter of this.#forgetters) add(await forgetter(principal, reach));
    return report;
  }

  /** Stops every server and the sandbox, deletes the kept results, then runs the `onClose` closers. */
  async close(): Promise<void> {
    await runClosers(this.#beforeClose.splice(0), this.logger);
    await this.readiness.flush();
    await Promise.all([this.pool.close(), this.#snippets.close()]);
    await this.results.clear();
    await runClosers(this.#closers.splice(0), this.logger);
  }
}

/** Runs each closer in order; one that fails is logged and the others still run. */
async function runClosers(closers: Array<() => Promise<void> | void>, logger: Logger): Promise<void> {
  for (const closer of closers) {
    try {
      await closer();
    } catch (error) {
      logger.warn(`while closing: ${(error as Error).message}`);
    }
  }
}
