import {
  LOCAL_PRINCIPAL,
  NO_MASK,
  silentLogger,
  type JobRunner,
  type Logger,
  type MetaTool,
  type RateBuckets,
  type SecretMask,
  type SessionInfo,
  type SkillShelf,
  type Surface,
  type ToolCallMiddleware,
} from "@codemux/core";
import { Catalog } from "@codemux/catalog";
import { ModuleTree } from "@codemux/codegen";
import { DEFAULT_CALL_TIMEOUT_MS, ServerPool, denyReason, type PoolConfig, type PoolOptions, type PoolUpdate, type ServerStatus } from "@codemux/pool";
import { HOST_CALL_GLOBAL, type CodeExecutor, type SandboxOptions } from "@codemux/sandbox";
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CatalogCache } from "./catalog-cache";
import { DEFAULT_DISCOVERY_WAIT_MS, DEFAULT_LARGE_RESULT_BYTES, DEFAULT_RESULT_TTL_MS, DEFAULT_STARTUP_WAIT_MS } from "./defaults";
import { maskedPoolView, maskedRelay, maskedStatus } from "./downstream-mask";
import { BadRequestError } from "./errors";
import type { TaskStoreFactory } from "./jobs";
import { McpFeatures } from "./mcp-features";
import { ModuleNamespace, type ModuleSource } from "./modules/namespace";
import { logCalls } from "./pipeline/log-calls";
import { Access } from "./policy/access";
import type { PolicyConfig } from "./policy/config";
import { ToolCallPipeline } from "./pipeline/pipeline";
import { Readiness } from "./readiness";
import type { AnswerHints } from "./render/hints";
import { ClientRelay } from "./relay";
import { ParkedCalls } from "./park";
import { RequestStates, STATE_KEY_VARIABLE } from "./signed-state";
import { ResultStore } from "./results";
import type { CodemuxServices } from "./services";
import type { ResultFormat } from "./render/toon";
import { forgetResultFiles, type DispatchFiles } from "./surfaces/dispatch-files";
import { retentionFor, type Retention } from "./retention";
import { SkillLibrary } from "./skills/library";
import { PROJECT_SKILLS_DIR } from "./skills/names";
import { ServerSkills } from "./skills/server-skills";
import { SnippetHost } from "./snippets";
import { FileStore } from "./stores/file-store";
import type { Store } from "./stores/store";
import { BUILT_IN_SURFACES } from "./surfaces/index";
import type { SurfaceFactory } from "./surfaces/surface";
import type { ToolPool } from "./tool-pool";
import { type ScanMode, type ScreenGate, ToolScreen } from "./screen";

export interface CodemuxOptions {
  config: PoolConfig;
  /**
   * The config's `security.scan` (default "quarantine"), and the pin plugin's judgement of listed tools: what the
   * model is shown of the servers' definitions (see `ToolScreen`).
   */
  scan?: { mode?: ScanMode; gate?: ScreenGate };
  /** The surface clients see, by name: `code` (default, the meta-tools), `passthrough` (every downstream tool), `dispatch` (one tool), or one added in `surfaces`. */
  mode?: string;
  logger?: Logger;
  /** The folder codemux was given (`--root`): what a shared server is told its roots are when its config entry names none. */
  root?: string;
  /** The downstream servers; a `ServerPool` of `config` when absent. */
  pool?: ToolPool;
  /** Options of the default `ServerPool`. */
  poolOptions?: PoolOptions;
  /** Runs snippets; a `Sandbox` (with `sandbox` options) when absent, started on first use. */
  executor?: CodeExecutor;
  sandbox?: SandboxOptions;
  /** Where large results are kept; files in a private temporary folder when absent. */
  resultStore?: Store;
  /** Where the last good catalog is kept, so a restart answers at once; `cacheDir` makes a file store; off when both are absent. */
  cacheStore?: Store;
  cacheDir?: string;
  /** Skip reading the cached catalog (it is still written): `--refresh-cache`. */
  refreshCache?: boolean;
  /** A cached catalog older than this (ms) still answers at start, and its lazy servers are connected once in the background to list their tools afresh; no limit by default. */
  catalogCacheTtlMs?: number;
  /** Middleware around every downstream call, first outermost (before the built-in argument validation). */
  middleware?: ToolCallMiddleware[];
  /**
   * Masks secrets in what servers send outside a call's result: log lines, progress, questions, prompts,
   * completions, list descriptions, instructions, failure reasons (`@codemux/hooks`' `mask`, by the redact
   * plugin's patterns). Nothing is masked without it; codemux's own log lines are masked by the built-in patterns all the same.
   */
  mask?: SecretMask;
  /** Who may see and call what (the config's `policies`, see `policiesOf`); everyone sees everything without it. */
  policies?: PolicyConfig;
  /**
   * Where the policies' calls per minute are counted: with several instances, buckets they share (Redis's),
   * so that a rule's limit holds across them; this instance's memory when absent.
   */
  policyBuckets?: RateBuckets;
  /** Reads the policies again at each `reload` (from the config file); a reload keeps the policies it started with without it. */
  reloadPolicies?: () => Promise<PolicyConfig | undefined>;
  /** Extra modes, by name. */
  surfaces?: Record<string, SurfaceFactory>;
  /** More meta-tools for mode `code` (jobs, agent...), after the built-in ones. */
  metaTools?: MetaTool<never, CodemuxServices>[];
  /** Runs `background: true` requests; without it they are refused. */
  jobs?: JobRunner;
  /** Serves MCP tasks (task-augmented tools/call, tasks/get, result, list, cancel) for each session; off without it. */
  taskStore?: TaskStoreFactory;
  /** More modules snippets may import, asked after codemux's own; each answers a specifier with TypeScript source or undefined. */
  moduleSources?: ModuleSource[];
  /** codemux's own folder for data that outlives a run (skills, journals); features that need it are off without it. */
  dataDir?: string;
  /** The folder of skills a team commits; `./.codemux/skills` when it exists and this is absent. */
  projectSkillsDir?: string;
  /** Where every instance of a deployment keeps saved skills (Redis) instead of `dataDir`; `services.skills.refresh()` reads them before serving. */
  sharedSkills?: SkillShelf;
  /** Keep each snippet, its bundle and source map under this folder (one subfolder a run), for debugging. */
  keepBundlesDir?: string;
  /** Log every downstream call at debug level (name, origin, outcome, duration); off by default, so the hot path builds no log line. */
  logCalls?: boolean;
  /** Milliseconds since the epoch; `Date.now` when absent. */
  clock?: () => number;
  /** How long a call waits for the server it needs while that server is still connecting. */
  startupWaitMs?: number;
  /** How long after start a search waits for servers with nothing cached. */
  discoveryWaitMs?: number;
  /** Results larger than this (bytes of JSON) are kept and previewed instead of returned whole. */
  largeResultBytes?: number;
  /** `toon`: JSON text results reach the model as TOON where that is shorter (tables of objects); `json` (default) leaves them as they are. */
  resultFormat?: ResultFormat;
  /** Folders dispatch's `call` may read `argumentsFile` from and write `resultToFile` to: the config's `dispatch`. */
  dispatchFiles?: DispatchFiles;
  resultTtlMs?: number;
  /** The key (32 bytes or more) codemux signs the requestState it hands 2026-07-28 clients with; `CODEMUX_STATE_KEY`, else a random one per process. */
  stateKey?: string;
  /** How long a 2026-07-28 client has to retry a call parked on a 2025 server's question (5 minutes when absent). */
  parkedCallTtlMs?: number;
  /** This instance's id behind a load balancer: parked calls' ids start with it, so a retry that reaches another instance is forwarded here. */
  instanceId?: string;
  /** How long each principal's kept results (and, through `retentionFor`, its jobs and audit lines) are kept: the config's `retention`. */
  retention?: Retention;
}

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
export class Codemux extends EventEmitter<CodemuxEvents> {
  readonly options: CodemuxOptions;
  readonly mode: string;
  readonly logger: Logger;
  readonly clock: () => number;
  readonly dataDir: string | undefined;
  readonly pool: ToolPool;
  readonly catalog = new Catalog();
  readonly pipeline: ToolCallPipeline;
  /** Routes the servers' sampling, elicitation and roots requests to the client whose call caused them. */
  readonly relay: ClientRelay;
  readonly results: ResultStore;
  /** Resources, prompts, completions and logging of every server, for every session. */
  readonly features: McpFeatures;
  readonly readiness: Readiness;
  /** The scanner's verdicts on what the servers list, and what of it the model is shown. */
  readonly scan: ToolScreen;
  /** What each session may see and call, under the config's policies. */
  readonly access: Access;
  /** What surfaces, meta-tools and front ends are given. */
  readonly services: Omit<CodemuxServices, "hints">;
  readonly requestStates: RequestStates;
  readonly parkedCalls: ParkedCalls;
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
  #skills: SkillLibrary | undefined;

  constructor(options: CodemuxOptions) {
    super();
    this.setMaxListeners(0);
    this.options = options;
    this.#config = options.config;
    this.#policies = options.policies;
    this.mask = options.mask ?? NO_MASK;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? Date.now;
    // Instances behind one balancer must share the key, or a retry that reaches another is refused (see docs/design/input-required.md).
    this.requestStates = new RequestStates({ key: options.stateKey ?? process.env[STATE_KEY_VARIABLE], clock: this.clock });
    this.parkedCalls = new ParkedCalls({
      ...(options.parkedCallTtlMs === undefined ? {} : { ttlMs: options.parkedCallTtlMs }),
      ...(options.instanceId === undefined ? {} : { instance: options.instanceId }),
    });
    this.dataDir = options.dataDir;
    this.#surfaceFactories = { ...BUILT_IN_SURFACES, ...options.surfaces };
    this.mode = options.mode ?? "code";
    if (!this.#surfaceFactories[this.mode]) throw new BadRequestError(`Unknown mode "${this.mode}"; modes: ${Object.keys(this.#surfaceFactories).join(", ")}.`);

    const rootUri = options.root === undefined ? undefined : pathToFileURL(resolve(options.root)).href;
    this.relay = new ClientRelay({
      roots: (server) => (this.#config.servers.find((s) => s.name === server)?.roots ?? (rootUri ? [rootUri] : [])).map((uri) => ({ uri })),
      isShared: (server) => this.#config.servers.find((s) => s.name === server)?.isolation === undefined,
      clock: this.clock,
    });
    this.results = new ResultStore({
      ttlMs: options.resultTtlMs ?? DEFAULT_RESULT_TTL_MS,
      ttlFor: (principal) => retentionFor(options.retention, "resultsMs", principal),
      now: this.clock,
      ...(options.resultStore ? { store: options.resultStore } : {}),
    });
    // A lazy server waits for its first call only when its tools are known without it (from the cache).
    this.pool =
      options.pool ??
      new ServerPool(options.config, {
        logger: this.logger,
        relay: maskedRelay(this.relay, this.mask),
        deferStart: (server) => this.readiness.isCached(server),
        // A server's era from the last run: no probe (and, for servers that exit on it, no second process) at start.
        priorEra: (server) => this.readiness.era(server),
        ...options.poolOptions,
      });
    const tree = new ModuleTree({ hostCallGlobal: HOST_CALL_GLOBAL });
    const cacheStore = options.cacheStore ?? (options.cacheDir ? new FileStore({ dir: options.cacheDir }) : undefined);
    this.scan = new ToolScreen({ mode: options.scan?.mode ?? "quarantine", logger: this.logger, gate: options.scan?.gate });
    this.readiness = new Readiness({
      screen: this.scan,
      pool: this.pool,
      catalog: this.catalog,
      modules: tree,
      cache: cacheStore ? new CatalogCache(cacheStore, options.config) : undefined,
      refreshCache: options.refreshCache === true,
      cacheTtlMs: options.catalogCacheTtlMs,
      logger: this.logger,
      clock: this.clock,
      startupWaitMs: options.startupWaitMs ?? DEFAULT_STARTUP_WAIT_MS,
      discoveryWaitMs: options.discoveryWaitMs ?? DEFAULT_DISCOVERY_WAIT_MS,
    });
    this.readiness.on("toolsChanged", () => this.emit("toolsChanged"));
    this.access = new Access(this.catalog, options.policies);
    this.pipeline = new ToolCallPipeline({
      access: this.access,
      clock: this.clock,
      ...(options.policyBuckets ? { rateBuckets: options.policyBuckets } : {}),
      pool: this.pool,
      catalog: this.catalog,
      middleware: [...(options.logCalls ? [logCalls(this.logger)] : []), this.relay.middleware(), ...(options.middleware ?? [])],
      waitForServer: (server) => this.readiness.waitForServer(server),
      mask: this.mask,
      inputRounds: {
        mask: this.mask,
        roots: (server, session, signal) => this.relay.rootsFor(server, session, signal),
        // A shared server with roots to be told (its entry's, or --root) is answered here; with none, a 2026 client's are asked (the referee's input-required-result-basic-list-roots).
        isShared: (server) => {
          const spec = this.#config.servers.find((s) => s.name === server);
          return spec?.isolation === undefined && (spec?.roots !== undefined || rootUri !== undefined);
        },
        timeoutMs: (server) => this.#config.servers.find((s) => s.name === server)?.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      },
      deniedReason: (server, tool) => {
        const spec = this.#config.servers.find((s) => s.name === server);
        return spec ? denyReason(spec.tools, tool) : undefined;
      },
    });
    const largeResultBytes = options.largeResultBytes ?? DEFAULT_LARGE_RESULT_BYTES;
    this.features = new McpFeatures({
      pool: this.pool,
      catalog: this.catalog,
      access: this.access,
      readiness: this.readiness,
      pipeline: this.pipeline,
      relay: this.relay,
      results: this.results,
      largeResultBytes,
      logger: this.logger,
      mask: this.mask,
      screen: this.scan,
    });
    const serverSkills = new ServerSkills({ pool: this.pool, catalog: this.catalog, access: this.access, logger: this.logger, screen: this.scan });
    const projectDir = options.projectSkillsDir ?? (existsSync(PROJECT_SKILLS_DIR) ? PROJECT_SKILLS_DIR : undefined);
    // Skills import the other modules as a snippet of the same principal would: the namespace answers them (made just below).
    const skills: SkillLibrary = new SkillLibrary(
      {
        catalog: this.catalog,
        status: () => this.pool.status(),
        moduleSource: (specifier, author): string | undefined => namespace.source(specifier, { id: "skill-check", ...author }),
        clock: this.clock,
        logger: this.logger,
      },
      {
        ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
        ...(projectDir !== undefined ? { projectDir } : {}),
        ...(options.sharedSkills ? { shared: options.sharedSkills } : {}),
      },
    );
    this.#skills = skills;
    const namespace: ModuleNamespace = new ModuleNamespace({
      tree,
      catalog: this.catalog,
      access: this.access,
      skills,
      resources: this.features,
      hostCallGlobal: HOST_CALL_GLOBAL,
      status: () => this.pool.status(),
      ...(options.moduleSources ? { extra: options.moduleSources } : {}),
    });
    this.#snippets = new SnippetHost({
      namespace,
      pipeline: this.pipeline,
      readiness: this.readiness,
      logger: this.logger,
      clock: this.clock,
      ...(options.executor ? { executor: options.executor } : {}),
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      ...(options.keepBundlesDir ? { keepBundlesDir: options.keepBundlesDir } : {}),
    });
    this.services = {
      logger: this.logger,
      catalog: this.catalog,
      access: this.access,
      mask: this.mask,
      readiness: this.readiness,
      // Why a server is down, as meta-tools answer it, is masked as `status()` is.
      pool: maskedPoolView(this),
      pipeline: this.pipeline,
      namespace,
      snippets: this.#snippets,
      results: this.results,
      largeResultBytes,
      resultFormat: options.resultFormat ?? "json",
      dispatchFiles: options.dispatchFiles,
      skills,
      serverSkills,
      features: this.features,
      jobs: options.jobs,
      requestStates: this.requestStates,
      surface: (mode) => this.surface(mode),
    };
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
    const policies = this.options.reloadPolicies ? await this.options.reloadPolicies() : undefined;
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
    const policiesChanged = this.options.reloadPolicies !== undefined && JSON.stringify(policies) !== JSON.stringify(this.#policies);
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
      surface = factory({ services: this.services, metaTools: this.options.metaTools ?? [], ...(options.hints ? { hints: options.hints } : {}) });
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
    add({ results: await this.results.forget(principal), skills: (await this.#skills?.forget(principal)) ?? 0 });
    if (this.options.dispatchFiles?.resultFileDir) add({ resultFiles: await forgetResultFiles(this.options.dispatchFiles, principal) });
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
