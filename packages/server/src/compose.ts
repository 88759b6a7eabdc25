import { LOCAL_PRINCIPAL, NO_MASK, silentLogger, type Logger, type SecretMask, type Surface } from "@codemux/core";
import { Catalog } from "@codemux/catalog";
import { ModuleTree } from "@codemux/codegen";
import { DEFAULT_CALL_TIMEOUT_MS, ServerPool, denyReason, type PoolConfig, type ServerStatus } from "@codemux/pool";
import { HOST_CALL_GLOBAL } from "@codemux/sandbox";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CatalogCache } from "./catalog-cache";
import type { CodemuxOptions } from "./codemux-options";
import { DEFAULT_DISCOVERY_WAIT_MS, DEFAULT_LARGE_RESULT_BYTES, DEFAULT_RESULT_TTL_MS, DEFAULT_STARTUP_WAIT_MS } from "./defaults";
import { maskedPoolView, maskedRelay } from "./downstream-mask";
import { BadRequestError } from "./errors";
import { McpFeatures } from "./mcp-features";
import { ModuleNamespace } from "./modules/namespace";
import { ParkedCalls } from "./park";
import { logCalls } from "./pipeline/log-calls";
import { ToolCallPipeline } from "./pipeline/pipeline";
import { Access } from "./policy/access";
import { Readiness } from "./readiness";
import { ClientRelay } from "./relay";
import { ResultStore } from "./results";
import { retentionFor } from "./retention";
import { ToolScreen } from "./screen";
import type { CodemuxServices } from "./services";
import type { SessionHost } from "./session";
import { RequestStates, STATE_KEY_VARIABLE } from "./signed-state";
import { SkillLibrary } from "./skills/library";
import { PROJECT_SKILLS_DIR } from "./skills/names";
import { ServerSkills } from "./skills/server-skills";
import { SnippetHost } from "./snippets";
import { FileStore } from "./stores/file-store";
import { BUILT_IN_SURFACES } from "./surfaces/index";
import type { SurfaceFactory } from "./surfaces/surface";
import type { ToolPool } from "./tool-pool";

/** What the services ask of the core that holds them: the config in force (a reload changes it), its surfaces, its masked status, word of tool changes. */
export interface CoreView {
  config(): PoolConfig;
  surface(mode?: string): Surface;
  status(): ServerStatus[];
  onToolsChanged(listener: () => void): () => void;
}

/** The services of one core, as `composeCodemux` builds them. */
export interface CoreParts {
  mode: string;
  logger: Logger;
  clock: () => number;
  mask: SecretMask;
  surfaceFactories: Record<string, SurfaceFactory>;
  requestStates: RequestStates;
  parkedCalls: ParkedCalls;
  relay: ClientRelay;
  results: ResultStore;
  pool: ToolPool;
  catalog: Catalog;
  scan: ToolScreen;
  readiness: Readiness;
  access: Access;
  pipeline: ToolCallPipeline;
  features: McpFeatures;
  snippets: SnippetHost;
  skills: SkillLibrary;
  services: Omit<CodemuxServices, "hints">;
  /** The session port: what MCP sessions are given. */
  sessions: SessionHost;
}

/**
 * Builds the services of a core in dependency order, each from those made before it, with every piece of
 * middleware (the options' own, front ends' among them) in the pipeline from the start. Two pairs need each
 * other, and each is tied by one named late reference: the pool asks the readiness (made from the pool) what
 * the last run cached, and the skill library checks a skill against the module namespace (made from the library).
 */
export function composeCodemux(options: CodemuxOptions, core: CoreView): CoreParts {
  const basics = composeBasics(options);
  const calls = composeCalls(options, core, basics);
  const parts = { ...basics, ...calls, ...composeModules(options, basics, calls) };
  return { ...parts, services: servicesOf(options, core, parts), sessions: sessionHostOf(options, core, parts) };
}

type Basics = Pick<CoreParts, "mode" | "logger" | "clock" | "mask" | "surfaceFactories" | "requestStates" | "parkedCalls">;
type Calls = Pick<CoreParts, "relay" | "results" | "pool" | "catalog" | "scan" | "readiness" | "access" | "pipeline"> & { tree: ModuleTree };
type Modules = Pick<CoreParts, "features" | "snippets" | "skills"> & { serverSkills: ServerSkills; namespace: ModuleNamespace; largeResultBytes: number };

/** The options' defaults, the mode checked, and the 2026-07-28 request states and parked calls. */
function composeBasics(options: CodemuxOptions): Basics {
  const clock = options.clock ?? Date.now;
  const surfaceFactories = { ...BUILT_IN_SURFACES, ...options.surfaces };
  const mode = options.mode ?? "code";
  if (!surfaceFactories[mode]) throw new BadRequestError(`Unknown mode "${mode}"; modes: ${Object.keys(surfaceFactories).join(", ")}.`);
  return {
    mode,
    logger: options.logger ?? silentLogger,
    clock,
    mask: options.mask ?? NO_MASK,
    surfaceFactories,
    // Instances behind one balancer must share the key, or a retry that reaches another is refused (see docs/design/input-required.md).
    requestStates: new RequestStates({ key: options.stateKey ?? process.env[STATE_KEY_VARIABLE], clock }),
    parkedCalls: new ParkedCalls({
      ...(options.parkedCallTtlMs === undefined ? {} : { ttlMs: options.parkedCallTtlMs }),
      ...(options.instanceId === undefined ? {} : { instance: options.instanceId }),
    }),
  };
}

/** The downstream side and the call path: the relay, kept results, the pool and its readiness, access and the pipeline. */
function composeCalls(options: CodemuxOptions, core: CoreView, { logger, clock, mask }: Basics): Calls {
  const specOf = (server: string) => core.config().servers.find((s) => s.name === server);
  const rootUri = options.root === undefined ? undefined : pathToFileURL(resolve(options.root)).href;
  const relay = new ClientRelay({
    roots: (server) => (specOf(server)?.roots ?? (rootUri ? [rootUri] : [])).map((uri) => ({ uri })),
    isShared: (server) => specOf(server)?.isolation === undefined,
    clock,
  });
  const results = new ResultStore({
    ttlMs: options.resultTtlMs ?? DEFAULT_RESULT_TTL_MS,
    ttlFor: (principal) => retentionFor(options.retention, "resultsMs", principal),
    now: clock,
    ...(options.resultStore ? { store: options.resultStore } : {}),
  });
  const catalog = new Catalog();
  const tree = new ModuleTree({ hostCallGlobal: HOST_CALL_GLOBAL });
  const cacheStore = options.cacheStore ?? (options.cacheDir ? new FileStore({ dir: options.cacheDir }) : undefined);
  const scan = new ToolScreen({ mode: options.scan?.mode ?? "quarantine", logger, gate: options.scan?.gate, itemGate: options.scan?.itemGate });
  // The late reference of the pool: it asks only once started, which the readiness does.
  const lastRun: { readiness?: Readiness } = {};
  const pool =
    options.pool ??
    new ServerPool(options.config, {
      logger,
      relay: maskedRelay(relay, mask),
      // A lazy server waits for its first call only when its tools are known without it (from the cache).
      deferStart: (server) => lastRun.readiness?.isCached(server) === true,
      // A server's era from the last run: no probe (and, for servers that exit on it, no second process) at start.
      priorEra: (server) => lastRun.readiness?.era(server),
      ...options.poolOptions,
    });
  const readiness = new Readiness({
    screen: scan,
    pool,
    catalog,
    modules: tree,
    cache: cacheStore ? new CatalogCache(cacheStore, options.config) : undefined,
    refreshCache: options.refreshCache === true,
    cacheTtlMs: options.catalogCacheTtlMs,
    logger,
    clock,
    startupWaitMs: options.startupWaitMs ?? DEFAULT_STARTUP_WAIT_MS,
    discoveryWaitMs: options.discoveryWaitMs ?? DEFAULT_DISCOVERY_WAIT_MS,
  });
  lastRun.readiness = readiness;
  const access = new Access(catalog, options.policies);
  options.link?.bind({ results, access });
  const pipeline = new ToolCallPipeline({
    access,
    clock,
    ...(options.policyBuckets ? { rateBuckets: options.policyBuckets } : {}),
    pool,
    catalog,
    middleware: [...(options.logCalls ? [logCalls(logger)] : []), relay.middleware(), ...(options.middleware ?? [])],
    waitForServer: (server) => readiness.waitForServer(server),
    mask,
    inputRounds: {
      mask,
      roots: (server, session, signal) => relay.rootsFor(server, session, signal),
      // A shared server with roots to be told (its entry's, or --root) is answered here; with none, a 2026 client's are asked (the referee's input-required-result-basic-list-roots).
      isShared: (server) => {
        const spec = specOf(server);
        return spec?.isolation === undefined && (spec?.roots !== undefined || rootUri !== undefined);
      },
      timeoutMs: (server) => specOf(server)?.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    },
    deniedReason: (server, tool) => {
      const spec = specOf(server);
      return spec ? denyReason(spec.tools, tool) : undefined;
    },
  });
  return { relay, results, pool, catalog, scan, readiness, access, pipeline, tree };
}

/** What models and clients read besides calls: the MCP features, servers' and saved skills, the module namespace and snippets. */
function composeModules(options: CodemuxOptions, { logger, clock, mask }: Basics, calls: Calls): Modules {
  const { pool, catalog, access, readiness, pipeline, relay, results, scan, tree } = calls;
  const largeResultBytes = options.largeResultBytes ?? DEFAULT_LARGE_RESULT_BYTES;
  const features = new McpFeatures({ pool, catalog, access, readiness, pipeline, relay, results, largeResultBytes, logger, mask, screen: scan });
  const serverSkills = new ServerSkills({ pool, catalog, access, logger, screen: scan });
  const projectDir = options.projectSkillsDir ?? (existsSync(PROJECT_SKILLS_DIR) ? PROJECT_SKILLS_DIR : undefined);
  // The late reference of the skills: a skill imports the other modules as a snippet of the same principal would, checked only once serving.
  const modules: { namespace?: ModuleNamespace } = {};
  const skills = new SkillLibrary(
    {
      catalog,
      status: () => pool.status(),
      moduleSource: (specifier, author): string | undefined => modules.namespace?.source(specifier, { id: "skill-check", ...author }),
      clock,
      logger,
      screen: scan,
    },
    {
      ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
      ...(projectDir !== undefined ? { projectDir } : {}),
      ...(options.sharedSkills ? { shared: options.sharedSkills } : {}),
    },
  );
  const namespace = new ModuleNamespace({
    tree,
    catalog,
    access,
    skills,
    serverSkills,
    resources: features,
    hostCallGlobal: HOST_CALL_GLOBAL,
    status: () => pool.status(),
    ...(options.moduleSources ? { extra: options.moduleSources } : {}),
  });
  modules.namespace = namespace;
  const snippets = new SnippetHost({
    namespace,
    pipeline,
    readiness,
    logger,
    clock,
    ...(options.executor ? { executor: options.executor } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(options.keepBundlesDir ? { keepBundlesDir: options.keepBundlesDir } : {}),
  });
  return { features, serverSkills, skills, namespace, snippets, largeResultBytes };
}

/** The services meta-tools are handed (`ctx.services`). */
function servicesOf(options: CodemuxOptions, core: CoreView, parts: Basics & Calls & Modules): Omit<CodemuxServices, "hints"> {
  return {
    logger: parts.logger,
    catalog: parts.catalog,
    access: parts.access,
    mask: parts.mask,
    readiness: parts.readiness,
    // Why a server is down, as meta-tools answer it, is masked as `status()` is.
    pool: maskedPoolView({ pool: parts.pool, status: () => core.status() }),
    pipeline: parts.pipeline,
    namespace: parts.namespace,
    snippets: parts.snippets,
    results: parts.results,
    largeResultBytes: parts.largeResultBytes,
    resultFormat: options.resultFormat ?? "json",
    dispatchFiles: options.dispatchFiles,
    skills: parts.skills,
    serverSkills: parts.serverSkills,
    features: parts.features,
    jobs: options.jobs,
    requestStates: parts.requestStates,
    surface: (name) => core.surface(name),
  };
}

/** The session port: what MCP sessions are given. */
function sessionHostOf(options: CodemuxOptions, core: CoreView, parts: Basics & Calls & Modules): SessionHost {
  return {
    surface: (name) => core.surface(name),
    session: () => ({ id: randomUUID(), principal: LOCAL_PRINCIPAL }),
    clock: parts.clock,
    logger: parts.logger,
    onToolsChanged: (listener) => core.onToolsChanged(listener),
    loaded: () => parts.readiness.loaded(),
    features: parts.features,
    requestStates: parts.requestStates,
    parkedCalls: parts.parkedCalls,
    taskStore: options.taskStore,
    serverSkills: parts.serverSkills,
    skills: parts.skills,
  };
}
