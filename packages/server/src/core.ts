import {
  BRIDGE_SPECIFIER,
  type ToolDefinition,
  silentLogger,
  type Logger,
  type Progress,
  type ToolResult,
  LOCAL_PRINCIPAL,
  type CallRequest,
  type SessionInfo,
  type ToolCallMiddleware,
} from "@codemux/core";
import { Catalog } from "@codemux/catalog";
import { ModuleTree, codegenToolOf } from "@codemux/codegen";
import { ServerPool, denyReason, ServerUnavailableError, type PoolConfig, type PoolOptions, type PoolUpdate, type ServerStatus } from "@codemux/pool";
import { HOST_CALL_GLOBAL, Sandbox, type CodeExecutor, type ExecuteResult, type SandboxOptions } from "@codemux/sandbox";
import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { EventEmitter } from "node:events";
import { CatalogCache } from "./catalog-cache";
import { CACHE_SAVE_DELAY_MS, DEFAULT_DISCOVERY_WAIT_MS, DEFAULT_LARGE_RESULT_BYTES, DEFAULT_RESULT_TTL_MS, DEFAULT_STARTUP_WAIT_MS } from "./defaults";
import { BadRequestError } from "./errors";
import type { JobRunner, TaskStoreFactory } from "./jobs";
import type { MetaTool } from "./meta-tools/registry";
import { checkQuery, formatHits, type SearchRequest } from "./meta-tools/search-tools";
import { logCalls } from "./pipeline/log-calls";
import { ToolCallPipeline, unavailable } from "./pipeline/pipeline";
import { McpFeatures } from "./mcp-features";
import { ClientRelay } from "./relay";
import { RESOURCES_SPECIFIER, isResourceCall, resourceCall, resourcesModule } from "./resources-module";
import { ResultStore } from "./results";
import { similarModules } from "./similar-modules";
import { FileStore } from "./stores/file-store";
import type { Store } from "./stores/store";
import { BUILT_IN_SURFACES } from "./surfaces/index";
import type { Surface, SurfaceFactory } from "./surfaces/surface";
import type { ToolPool } from "./tool-pool";

/** Answers a module specifier with its TypeScript source, or undefined when it is not one of its modules. */
export type ModuleSource = (specifier: string, session?: SessionInfo) => string | undefined;

export interface CodemuxOptions {
  config: PoolConfig;
  /** The surface clients see, by name: `code` (default, the meta-tools), `passthrough` (every downstream tool), or one added in `surfaces`. */
  mode?: string;
  logger?: Logger;
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
  /** Middleware around every downstream call, first outermost (before the built-in argument validation). */
  middleware?: ToolCallMiddleware[];
  /** Extra modes, by name. */
  surfaces?: Record<string, SurfaceFactory>;
  /** More meta-tools for mode `code` (jobs, skills...), after the built-in ones. */
  metaTools?: MetaTool<never>[];
  /** Runs `background: true` requests; without it they are refused. */
  jobs?: JobRunner;
  /** Serves MCP tasks (task-augmented tools/call, tasks/get, result, list, cancel) for each session; off without it. */
  taskStore?: TaskStoreFactory;
  /** More modules snippets may import (saved skills, ...), asked after the tool wrappers; each answers a specifier with TypeScript source or undefined. */
  moduleSources?: ModuleSource[];
  /** codemux's own folder for data that outlives a run (skills, journals); features that need it are off without it. */
  dataDir?: string;
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
  resultTtlMs?: number;
  /**
   * The folder codemux was given (the CLI's `--root`, or the folder the built-in default serves): the root
   * a server whose entry has no `roots` is told when it asks; with neither, it is told none.
   */
  root?: string;
}

export interface ExecuteOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  session?: SessionInfo;
  requestId?: string;
  /** The background job running this snippet; its calls carry it. */
  job?: string;
  onprogress?: (progress: { tool: string; progress: Progress }) => void;
}

interface CodemuxEvents {
  /** The set of tools changed (a server connected, dropped or changed its list). */
  toolsChanged: [];
}

/**
 * The shared heart of codemux: one pool, catalog, module tree, call pipeline and sandbox that serve
 * any number of client sessions. A session's MCP server is `createSessionServer(core)`; the CLI and
 * other front ends call `core.surface(mode).callTool(...)`, the same answers the model gets.
 *
 * @example
 * const core = new Codemux({ config: await loadConfigFile("codemux.json") });
 * core.start();
 * const code = core.surface("code");
 * const answer = await code.callTool("search_tools", { query: "read a file" }, { core, session: core.session(), origin: "cli" });
 * await core.close();
 */
export class Codemux extends EventEmitter<CodemuxEvents> {
  readonly pool: ToolPool;
  readonly catalog = new Catalog();
  readonly modules = new ModuleTree({ hostCallGlobal: HOST_CALL_GLOBAL });
  readonly pipeline: ToolCallPipeline;
  /** Routes the servers' sampling and elicitation requests to the client whose call caused them, and answers their roots requests from the config. */
  readonly relay: ClientRelay;
  readonly results: ResultStore;
  readonly mode: string;
  readonly logger: Logger;
  readonly largeResultBytes: number;
  readonly clock: () => number;
  readonly dataDir: string | undefined;
  /** Meta-tools added to mode `code` (see `CodemuxOptions.metaTools`). */
  readonly extraMetaTools: readonly MetaTool<never>[];
  readonly jobs: JobRunner | undefined;
  /** Module sources after the wrappers; add to it to make more modules importable. */
  readonly moduleSources: ModuleSource[];
  readonly #startupWaitMs: number;
  readonly #discoveryWaitMs: number;
  readonly #surfaceFactories: Record<string, SurfaceFactory>;
  readonly #surfaces = new Map<string, Surface>();
  readonly #cache: CatalogCache | undefined;
  /** Servers whose tools so far come from the disk cache, not from the server. */
  readonly #cached = new Set<string>();
  #cacheLoaded: Promise<void> = Promise.resolve();
  #startedAt: number | undefined;
  #saveTimer: NodeJS.Timeout | undefined;
  #executor: CodeExecutor | undefined;
  readonly #executorOption: CodeExecutor | undefined;
  readonly #sandboxOptions: SandboxOptions | undefined;
  #config: PoolConfig;
  readonly #closers: Array<() => Promise<void> | void> = [];
  readonly #beforeClose: Array<() => Promise<void> | void> = [];

  constructor(readonly options: CodemuxOptions) {
    super();
    this.setMaxListeners(0);
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? Date.now;
    this.largeResultBytes = options.largeResultBytes ?? DEFAULT_LARGE_RESULT_BYTES;
    this.dataDir = options.dataDir;
    this.extraMetaTools = options.metaTools ?? [];
    this.jobs = options.jobs;
    this.moduleSources = [...(options.moduleSources ?? [])];
    this.#startupWaitMs = options.startupWaitMs ?? DEFAULT_STARTUP_WAIT_MS;
    this.#discoveryWaitMs = options.discoveryWaitMs ?? DEFAULT_DISCOVERY_WAIT_MS;
    this.#surfaceFactories = { ...BUILT_IN_SURFACES, ...options.surfaces };
    this.mode = options.mode ?? "code";
    if (!this.#surfaceFactories[this.mode]) throw new BadRequestError(`Unknown mode "${this.mode}"; modes: ${Object.keys(this.#surfaceFactories).join(", ")}.`);
    this.#executorOption = options.executor;
    this.#sandboxOptions = options.sandbox;
    const rootUri = options.root === undefined ? undefined : pathToFileURL(resolve(options.root)).href;
    this.relay = new ClientRelay({
      roots: (server) => (this.#config.servers.find((s) => s.name === server)?.roots ?? (rootUri ? [rootUri] : [])).map((uri) => ({ uri })),
      clock: this.clock,
    });
    this.results = new ResultStore({
      ttlMs: options.resultTtlMs ?? DEFAULT_RESULT_TTL_MS,
      now: this.clock,
      ...(options.resultStore ? { store: options.resultStore } : {}),
    });
    // A lazy server waits for its first call only when its tools are known without it (from the cache).
    this.pool =
      options.pool ??
      new ServerPool(options.config, { logger: this.logger, relay: this.relay, deferStart: (server) => this.#cached.has(server), ...options.poolOptions });
    this.pipeline = new ToolCallPipeline({
      pool: this.pool,
      catalog: this.catalog,
      middleware: [...(options.logCalls ? [logCalls(this.logger)] : []), this.relay.middleware(), ...(options.middleware ?? [])],
      waitForServer: (server) => this.#waitForServer(server),
      deniedReason: (server, tool) => {
        const spec = this.#config.servers.find((s) => s.name === server);
        return spec ? denyReason(spec.tools, tool) : undefined;
      },
    });
    const cacheStore = options.cacheStore ?? (options.cacheDir ? new FileStore({ dir: options.cacheDir }) : undefined);
    this.#cache = cacheStore ? new CatalogCache(cacheStore, options.config) : undefined;
    this.pool.on("tools", (server, tools) => {
      this.#cached.delete(server);
      this.#setServerTools(server, tools);
      this.#scheduleSave();
    });
    this.pool.on("removed", (server) => {
      this.#cached.delete(server);
      this.catalog.removeServer(server);
      this.modules.removeServer(server);
      this.emit("toolsChanged");
    });
    this.#config = options.config;
    this.features = new McpFeatures(this);
  }

  /** Resources, prompts, completions and logging of every server, for every session. */
  readonly features: McpFeatures;

  /** The config being served (the last one `reload` applied). */
  get config(): PoolConfig {
    return this.#config;
  }

  /**
   * Applies a changed config while serving: servers added, removed or changed are started, stopped
   * or restarted; unchanged servers keep their connection; clients are told their tool list changed.
   */
  async reload(config: PoolConfig): Promise<PoolUpdate> {
    if (!this.pool.update) throw new BadRequestError("This pool cannot be reloaded; restart codemux to apply the new config.");
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
    if (update.added.length + update.removed.length + update.changed.length > 0) this.emit("toolsChanged");
    return update;
  }

  /**
   * Loads the cached catalog, then connects every server in the background. Requests wait only for
   * the server they need; `ready()` waits for all. `warmSandbox` starts a sandbox worker once the
   * servers are up, so the first execute_code does not wait for it.
   */
  start(options: { warmSandbox?: boolean } = {}): void {
    if (this.#startedAt !== undefined) return;
    this.#startedAt = this.clock();
    this.#cacheLoaded = this.#loadCache();
    const started = this.#cacheLoaded.then(() => this.pool.start());
    if (options.warmSandbox && this.mode === "code") void started.then(() => this.executor.execute({ code: "export default 0" })).catch(() => undefined);
  }

  /** A new client session (over stdio, the one local user). */
  session(principal = LOCAL_PRINCIPAL): SessionInfo {
    return { id: randomUUID(), principal };
  }

  /** The surface of a mode, made once per core. */
  surface(name: string = this.mode): Surface {
    let surface = this.#surfaces.get(name);
    if (!surface) {
      const factory = this.#surfaceFactories[name];
      if (!factory) throw new BadRequestError(`Unknown mode "${name}"; modes: ${Object.keys(this.#surfaceFactories).join(", ")}.`);
      surface = factory(this);
      this.#surfaces.set(name, surface);
    }
    return surface;
  }

  /** Waits (bounded) until every server has connected or failed; servers known from the cache do not hold it up. True when all settled in time. */
  async ready(timeoutMs = this.#startupWaitMs): Promise<boolean> {
    await this.#cacheLoaded;
    const waiting = this.pool.status().filter((s) => s.state === "connecting" && !this.#cached.has(s.name));
    if (waiting.length === 0) return true;
    return this.#waitUntil(() => this.pool.status().every((s) => s.state !== "connecting" || this.#cached.has(s.name)), timeoutMs);
  }

  /** Waits (bounded) until every server has connected or failed, cached or not: for one-shot commands that want live servers. */
  async settled(timeoutMs = this.#startupWaitMs): Promise<boolean> {
    await this.#cacheLoaded;
    return this.#waitUntil(() => this.pool.status().every((s) => s.state !== "connecting"), timeoutMs);
  }

  /**
   * For answers over the whole catalog (search, module lists): waits for servers with nothing cached
   * only during the first seconds after start, so a hung server never holds a search up for long.
   */
  async discovered(): Promise<void> {
    await this.#cacheLoaded;
    const left = (this.#startedAt ?? this.clock()) + this.#discoveryWaitMs - this.clock();
    if (left > 0) await this.ready(left);
  }

  status(): ServerStatus[] {
    return this.pool.status();
  }

  /** Servers still connecting, for a note under answers given before they are all there. */
  pendingNote(): string[] {
    const connecting = this.pool
      .status()
      .filter((s) => s.state === "connecting")
      .map((s) => s.name);
    const missing = connecting.filter((s) => !this.#cached.has(s));
    const cached = connecting.filter((s) => this.#cached.has(s));
    return [
      ...(missing.length ? [`(still connecting: ${missing.join(", ")}; their tools are not listed yet)`] : []),
      ...(cached.length ? [`(still connecting: ${cached.join(", ")}; their tools are listed from the last run)`] : []),
    ];
  }

  /** Ranked hits as text, as search_tools answers. */
  async searchTools(request: SearchRequest, options: { session?: SessionInfo } = {}): Promise<string> {
    const query = checkQuery(request.query);
    await this.discovered();
    if (request.server !== undefined && this.catalog.entries(request.server).length === 0) {
      const down = unavailable(this.pool, request.server);
      if (down) throw new ServerUnavailableError(down.server, down.reason);
      throw new BadRequestError(`No server named "${request.server.slice(0, 100)}". Servers: ${this.catalog.servers().join(", ") || "none"}.`);
    }
    const hits = this.catalog.search(query, {
      limit: request.limit ?? 10,
      ...(request.server ? { server: request.server } : {}),
      // Saved skills belong to a principal: another's are left out.
      ...(options.session ? { owner: options.session.principal } : {}),
    });
    const lines = hits.length
      ? formatHits(
          hits.map((h) => h.entry),
          request.detail ?? "summary",
        )
      : [`No tools match "${query}". Try other words, or list_modules to browse ${this.catalog.size} tools of ${this.catalog.servers().length} servers.`];
    return [...lines, ...this.pendingNote()].join("\n");
  }

  /** One downstream call through the pipeline (resolution, middleware, validation, the pool). */
  callTool(request: CallRequest): Promise<ToolResult> {
    return this.pipeline.call(request);
  }

  /** Runs a snippet; its tool calls take the same pipeline as call_tool, with origin `execute_code`. */
  async executeCode(code: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    await this.#cacheLoaded;
    await Promise.all(importedServers(code).map((server) => this.#waitForServer(server)));
    const session = options.session ?? this.session();
    const { requestId, job, onprogress } = options;
    // The run's calls end downstream on one signal, aborted when the run ends, as each call's own signal then is (for calls still pending).
    let runCalls: AbortController | undefined;
    try {
      return await this.executor.execute({
        code,
        modules: (specifier) => this.module(specifier, session),
        suggestModules: (specifier) => similarModules(specifier, this),
        // A snippet's every tool call comes through here: the request is built field by field, with no spread objects.
        onCall: (name, args, context) => {
          if (isResourceCall(name)) return resourceCall(this, { name, args, session, signal: context.signal });
          runCalls ??= new AbortController();
          const request: CallRequest = { name, arguments: args, origin: "execute_code", session, signal: context.signal, downstreamSignal: runCalls.signal };
          if (requestId !== undefined) request.requestId = requestId;
          if (job !== undefined) request.job = job;
          if (onprogress) request.progress = (progress: Progress) => onprogress({ tool: name, progress });
          return this.pipeline.call(request);
        },
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(this.options.keepBundlesDir ? { onBundle: (bundle) => void this.#keepBundle(this.options.keepBundlesDir as string, bundle) } : {}),
      });
    } finally {
      runCalls?.abort(new Error("The sandbox run ended."));
    }
  }

  /** Writes one run's snippet, bundle and source map to a folder of its own (owner-only), and logs where. */
  async #keepBundle(dir: string, bundle: { entry: string; bundle: string; map: string }): Promise<void> {
    const runDir = join(dir, `${new Date(this.clock()).toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`);
    try {
      await mkdir(runDir, { recursive: true, mode: 0o700 });
      await Promise.all([
        writeFile(join(runDir, "entry.ts"), bundle.entry, { mode: 0o600 }),
        writeFile(join(runDir, "bundle.mjs"), bundle.bundle, { mode: 0o600 }),
        writeFile(join(runDir, "bundle.mjs.map"), bundle.map, { mode: 0o600 }),
      ]);
      this.logger.info(`kept the snippet and its bundle in ${runDir}`);
    } catch (error) {
      this.logger.warn(`could not keep the bundle in ${runDir}: ${(error as Error).message}`);
    }
  }

  /** The source of a module a snippet may import: a tool wrapper, the bridge, or one of `moduleSources`. */
  module(specifier: string, session?: SessionInfo): string | undefined {
    const wrapper = this.modules.get(specifier);
    if (wrapper !== undefined) return wrapper;
    if (specifier.replace(/\.ts$/, "") === RESOURCES_SPECIFIER) return resourcesModule(HOST_CALL_GLOBAL);
    for (const source of this.moduleSources) {
      const found = source(specifier, session);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  get executor(): CodeExecutor {
    // Every tool wrapper imports the bridge: each run's engine builds it before the run.
    this.#executor ??=
      this.#executorOption ?? new Sandbox({ preloadModules: { [BRIDGE_SPECIFIER]: this.modules.get(BRIDGE_SPECIFIER) as string }, ...this.#sandboxOptions });
    return this.#executor;
  }

  /**
   * Runs `closer` when the core closes: after its servers and sandbox stop (plugins flushing their
   * files), or with `before: true` while they still run (a job runner recording its jobs as interrupted).
   */
  onClose(closer: () => Promise<void> | void, options: { before?: boolean } = {}): void {
    (options.before ? this.#beforeClose : this.#closers).push(closer);
  }

  /** Stops every server and the sandbox, deletes the kept results, then runs the `onClose` closers. */
  async close(): Promise<void> {
    await runClosers(this.#beforeClose.splice(0), this.logger);
    if (this.#saveTimer) {
      clearTimeout(this.#saveTimer);
      await this.#save();
    }
    await Promise.all([this.pool.close(), this.#executor?.close()]);
    await this.results.clear();
    await runClosers(this.#closers.splice(0), this.logger);
  }

  async #loadCache(): Promise<void> {
    if (!this.#cache || this.options.refreshCache) return;
    const names = new Set(this.pool.names);
    for (const [server, tools] of await this.#cache.load()) {
      if (!names.has(server) || this.catalog.entries(server).length > 0) continue;
      this.#cached.add(server);
      this.#setServerTools(server, tools);
    }
  }

  /** Waits (bounded) while one server is connecting for the first time with nothing cached; at once otherwise. */
  async #waitForServer(server: string): Promise<void> {
    await this.#cacheLoaded;
    const connecting = () => this.pool.status().some((s) => s.name === server && s.state === "connecting") && !this.#cached.has(server);
    if (connecting()) await this.#waitUntil(() => !connecting(), this.#startupWaitMs);
  }

  /** Resolves true once `done()` holds (checked on every server state change), or false after `timeoutMs`. */
  #waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.pool.off("state", onState);
        resolve(value);
      };
      const onState = () => {
        if (done()) finish(true);
      };
      const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
      this.pool.on("state", onState);
    });
  }

  #scheduleSave(): void {
    if (!this.#cache) return;
    clearTimeout(this.#saveTimer);
    this.#saveTimer = setTimeout(() => void this.#save(), CACHE_SAVE_DELAY_MS);
    this.#saveTimer.unref();
  }

  async #save(): Promise<void> {
    this.#saveTimer = undefined;
    const servers = new Map(this.catalog.servers().map((s) => [s, this.catalog.entries(s).map((e) => e.tool)]));
    try {
      await this.#cache?.save(servers);
    } catch (error) {
      this.logger.warn(`could not write the catalog cache: ${(error as Error).message}`);
    }
  }

  #setServerTools(server: string, tools: ToolDefinition[]): void {
    this.catalog.setServerTools(server, tools);
    this.modules.setServer(server, this.catalog.entries(server).map(codegenToolOf));
    this.emit("toolsChanged");
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

/** Servers a snippet imports (`mcp/servers/<name>`), so it waits only for those; linear in the code's length. */
function importedServers(code: string): string[] {
  const servers = new Set<string>();
  for (const match of code.slice(0, 1_000_000).matchAll(/mcp\/servers\/([A-Za-z0-9_-]{1,100})/g)) servers.add(match[1] as string);
  return [...servers].slice(0, 100);
}
