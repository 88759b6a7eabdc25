import {
  NO_MASK,
  redactingLogger,
  stderrLogger,
  type LogLevel,
  type Logger,
  type RateBuckets,
  type RecordTable,
  type SharedLists,
  type Store,
} from "@codemux/core";
import { markSelf, parseJsonc, type PoolConfig, readConfigText } from "@codemux/pool";
import { Redactor, loadPlugins, type LoadedPlugins, type ResultKeeper } from "@codemux/hooks";
import { httpCallRecorders, type HttpCallRecorders, type HttpSettings, type UiSources } from "@codemux/http";
import { createJobs, jobsListing, type JobManager, type Jobs } from "@codemux/jobs";
import {
  Codemux,
  CoreLink,
  codemuxHome,
  type CodemuxOptions,
  type CodemuxLifecycle,
  policiesOf,
  retentionFor,
  scanModeOf,
  type ResultFormat,
  type Retention,
} from "@codemux/server";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { defaultConfig, graphsFolder } from "./default-config";
import { RuntimeError } from "./errors";
import { uiSources } from "./ui-sources";
import { forgetElsewhere, forgetShared } from "./forget-shared";
import { shareJobQueue } from "./job-queue";
import { startTracing } from "./tracing";
import { configReloader, type ConfigReload } from "./reload";
import type { CodemuxConfig } from "./config";
import type { SharedState } from "./shared-state";

/** How one start of codemux runs: what the command line (or an embedding) decides beside the config. */
export interface StartOptions {
  /** Lines below this level are not logged; `debug` also logs every call. */
  level: LogLevel;
  /** Where codemux's own lines go, masked by the redact plugin's patterns once it loads; default: stderr at `level`. */
  logger?: Logger;
  /** Serving (`serve`): background jobs, the config's serving sections, reloads; a one-shot command prints whole results. */
  serving?: boolean;
  /** Serving over HTTP: CODEMUX_DEBUG_EXEC is ignored there unless `keepBundlesDir` says so, since bundles hold snippet text. */
  remote?: boolean;
  /** Keep snippets and their bundles here (`exec --keep-bundle DIR`, `serve --debug-exec`). */
  keepBundlesDir?: string;
  /** Results larger are kept as handles; over the config's `spillBytes`. */
  spillBytes?: number;
  /** Over the config's `resultFormat`. */
  resultFormat?: ResultFormat;
  /**
   * Start nothing yet (no server, no jobs journal): the caller calls the returned `begin()` when the
   * first real request comes (`serve` over stdio, which a 2026-07-28 client may only probe).
   */
  deferStart?: boolean;
  /** State shared with other instances (`openSharedState`): kept results, the catalog cache and rate-limit buckets live there. */
  shared?: SharedState;
  /** Served to several principals (HTTP with more than one token, a token file, or OAuth): the built-in default keeps their memories apart. */
  manyPrincipals?: boolean;
  /** Serving over HTTP: the HTTP server's call recorders (/metrics, the admin page's Activity) are made with the core's mask, their middleware composed after the plugins' and the jobs'. */
  recordCalls?: boolean;
  /** The tool surface: "code" (the default) or another mode the server knows. */
  mode?: string;
  /** The folder the built-in default serves and servers without `roots` are told; default the current folder. */
  root?: string;
  /** Serve `/` or the home folder as the built-in default's root (refused otherwise). */
  allowBroadRoot?: boolean;
  /** Start servers at their first use. */
  lazy?: boolean;
  /** `false`: no catalog cache. */
  cache?: boolean;
  /** Ignore the catalog cache and list every server again (also CODEMUX_REFRESH_CACHE=1). */
  refreshCache?: boolean;
}

/** What one start of codemux is: the core with its ports, and what a front end serving it needs. */
export interface Started {
  core: Codemux;
  /** The config this start read (once) and served. */
  config: CodemuxConfig;
  logger: Logger;
  level: LogLevel;
  http: HttpSettings;
  ui: UiSources;
  jobs?: JobManager;
  /** The HTTP server's call recorders, with `recordCalls`: the `CodemuxHttpServer` is given the same ones. */
  recorders?: HttpCallRecorders;
  /** Starts the servers (and the jobs' recovery) when `deferStart` held them back; once. */
  begin: () => void;
  /** Applies the edited config file: servers, policies and plugins as one change (the file watch, /restart). */
  reloader: { reload(config: PoolConfig): Promise<ConfigReload> };
}

/** A config file as parsed JSON: the same JSONC reading as the servers' (resolveConfig refuses a file that does not parse). */
export async function readRawConfig(configFile: string | undefined): Promise<Record<string, unknown> | undefined> {
  return configFile ? (parseJsonc(await readConfigText(configFile), configFile).value as Record<string, unknown>) : undefined;
}

/**
 * Starts codemux on a config read once (`loadCodemuxConfig`): the plugins, the jobs and the core composed
 * with their middleware, shared state when given; what `serve`, `exec` and the other commands run on.
 */
export async function startCodemux(loaded: CodemuxConfig, options: StartOptions): Promise<Started> {
  const { level } = options;
  // codemux's own lines quote servers (their stderr, log lines, errors): masked by the redact plugin's patterns once it loads.
  let masking: LoadedPlugins | undefined;
  const logger = redactingLogger(options.logger ?? stderrLogger({ level }), (text) => masking?.mask.text(text) ?? text);
  // A config that lists codemux itself (a client's own file) must not make it start itself.
  markSelf(process.argv[1]);
  const config = loaded.servers ?? defaultConfig({ cwd: builtInRoot(options), manyPrincipals: options.manyPrincipals === true });
  for (const warning of loaded.servers ? loaded.warnings : [...(config.warnings ?? []), ...loaded.warnings]) logger.warn(warning);
  if (config.source === "built-in default" && options.manyPrincipals)
    logger.info(`the built-in default serves several principals: each gets a memory server and graph of its own (under ${graphsFolder()})`);
  const { file: configFile, retention } = loaded;
  const serving = loaded.serving ?? { http: {}, jobs: {} };
  // Plugins and jobs are made before the core (their middleware goes into it); they reach its result store and policies through the link it binds.
  const link = new CoreLink();
  // The config's `tracing` may turn traces on, before anything that makes spans starts (the OTEL_* variables may have already).
  await startTracing(process.env, loaded.tracing);
  const plugins = await pluginsFor(loaded, options, { logger, keep: link.keep });
  masking = plugins;
  const jobs = jobsOf(loaded, options, { logger, plugins, link });
  const recorders = options.recordCalls ? httpCallRecorders({ mask: plugins?.mask ?? NO_MASK }) : undefined;
  const core = new Codemux({
    config,
    link,
    // The pin plugin judges what the scan flags (and changed definitions): the model sees the approved definition or nothing.
    scan: {
      mode: loaded.scan,
      ...(plugins ? { gate: (tools) => plugins.screen(tools), itemGate: (scope, flagged) => plugins.holdItems(scope, flagged) } : {}),
    },
    // What a server whose entry sets no `roots` is told when it asks: --root, or the folder the built-in default serves.
    ...(options.root !== undefined || config.source === "built-in default" ? { root: builtInRoot(options) } : {}),
    ...(options.mode ? { mode: options.mode } : {}),
    logger,
    ...(retention ? { retention } : {}),
    ...resultFormatFrom(options.resultFormat ?? loaded.resultFormat),
    ...(loaded.dispatchFiles ? { dispatchFiles: loaded.dispatchFiles } : {}),
    logCalls: level === "debug",
    ...(options.lazy ? { poolOptions: { lazy: true } } : {}),
    ...keepBundles(options),
    dataDir: codemuxHome(),
    ...cacheOf(options.cache !== false, options.shared),
    ...sharedOptions(options.shared),
    ...(loaded.serving?.stateKey !== undefined && !process.env.CODEMUX_STATE_KEY ? { stateKey: loaded.serving.stateKey } : {}),
    // Client configs can set environment variables where they cannot add flags.
    ...(options.refreshCache || process.env.CODEMUX_REFRESH_CACHE === "1" ? { refreshCache: true } : {}),
    ...cacheTtlOf(process.env.CODEMUX_CATALOG_CACHE_TTL_MS),
    // A one-shot command prints the whole result: a handle would die with the process. --spill-bytes wins over the config's.
    ...(options.serving ? spillOf(options.spillBytes ?? serving.spillBytes) : { largeResultBytes: Number.POSITIVE_INFINITY }),
    ...extensionsOf(plugins, jobs, recorders),
    ...(loaded.policies ? { policies: loaded.policies } : {}),
    // A reload (the file watch, /restart) reads the policies again with the servers; a mistake keeps the last good ones.
    ...(options.serving && configFile
      ? { reloadPolicies: async () => policiesOf(parseJsonc(await readConfigText(configFile), configFile).value, configFile) }
      : {}),
  });
  wire(core, { jobs, plugins, logger, shared: options.shared });
  // Shared skills are read before serving; Redis not there yet: served from what arrives once it is (the shelf re-reads on reconnect).
  await core.refreshSkills().catch((error: Error) => logger.warn(`skills: ${error.message}`));
  const begin = beginOnce(core, jobs, options.serving === true);
  if (!options.deferStart) begin();
  const reloader = configReloader(core, plugins, {
    read: () => readRawConfig(configFile),
    scanMode: configFile ? (config) => scanModeOf(config, configFile) : undefined,
  });
  return {
    core,
    config: loaded,
    logger,
    level,
    http: serving.http,
    ui: uiSources(plugins, jobs),
    ...(jobs ? { jobs: jobs.manager } : {}),
    ...(recorders ? { recorders } : {}),
    begin,
    reloader,
  };
}

/** Starts the servers (warming the sandbox when serving) and the jobs' recovery, once. */
function beginOnce(core: Codemux, jobs: Jobs | undefined, serving: boolean): () => void {
  let begun = false;
  return () => {
    if (begun) return;
    begun = true;
    core.start({ warmSandbox: serving });
    // Jobs that a dead process left running are marked interrupted now, not at the first jobs call.
    void jobs?.recover().catch(() => undefined);
  };
}

/** The plugins of a start: the config's, loaded even without a plugins section when serving (an edit may turn them on), on the shared store's parts. */
async function pluginsFor(
  loaded: CodemuxConfig,
  options: Pick<StartOptions, "serving" | "shared">,
  { logger, keep }: { logger: Logger; keep: ResultKeeper["keep"] },
): Promise<LoadedPlugins | undefined> {
  const { file: configFile, raw, retention } = loaded;
  const shared = options.shared;
  return await pluginsOf({
    config: raw && configFile ? { raw, file: configFile } : undefined,
    reloadable: options.serving === true,
    logger,
    retention,
    keep,
    ...(shared?.rateBuckets ? { rateBuckets: shared.rateBuckets } : {}),
    ...(shared?.pluginStore ? { sharedStore: shared.pluginStore } : {}),
    ...(shared?.pinRecords ? { pinRecords: shared.pinRecords } : {}),
    ...(shared?.memories ? { sharedLists: shared.memories } : {}),
    ...(configFile ? { scanMode: (config: unknown) => scanModeOf(config, configFile) } : {}),
  });
}

/** Background jobs, only when serving (a one-shot command would end its own jobs when it exits). */
function jobsOf(
  loaded: CodemuxConfig,
  options: StartOptions,
  { logger, plugins, link }: { logger: Logger; plugins: LoadedPlugins | undefined; link: CoreLink },
): Jobs | undefined {
  if (!options.serving) return undefined;
  const serving = loaded.serving ?? { http: {}, jobs: {} };
  const { http } = serving;
  const { retention } = loaded;
  return createJobs({
    dataDir: codemuxHome(),
    ...(options.deferStart ? { openLater: true } : {}),
    ...serving.jobs,
    logger,
    retentionFor: (principal) => retentionFor(retention, "jobsMs", principal),
    // The journal masks arguments as the audit plugin does: by the redact plugin's patterns while it is on.
    redactor: plugins?.records ?? new Redactor(),
    ...(http.maxJobsPerPrincipal ? { maxQueuedPerPrincipal: http.maxJobsPerPrincipal } : {}),
    ...(options.shared?.jobShare ? { share: options.shared.jobShare } : {}),
    // A policy's jobs at once, counted on every instance together.
    ...(options.shared?.jobSlots ? { slots: options.shared.jobSlots } : {}),
    ...(http.principalLimits ? { principalLimits: http.principalLimits } : {}),
    // The policies live in the core, made after; a job starts only once it serves.
    jobsAtOnce: (session) => link.grant(session)?.concurrentJobs,
  });
}

/** What the core keeps in the shared store: kept results, saved skills, the policies' call counts, and this instance's id. */
function sharedOptions(shared: SharedState | undefined): Partial<CodemuxOptions> {
  return {
    ...(shared?.resultStore ? { resultStore: shared.resultStore } : {}),
    ...(shared?.skillShelf ? { sharedSkills: shared.skillShelf } : {}),
    // A policy's calls per minute, counted on every instance together.
    ...(shared?.rateBuckets ? { policyBuckets: shared.rateBuckets } : {}),
    ...(shared?.scaleOut ? { instanceId: shared.instanceId } : {}),
  };
}

/** The core's middleware (the plugins', the jobs', the HTTP server's call recorders), its mask, and the meta-tools the jobs and plugins add. */
function extensionsOf(plugins: LoadedPlugins | undefined, jobs: Jobs | undefined, recorders: HttpCallRecorders | undefined): Partial<CodemuxOptions> {
  return {
    middleware: [...(plugins ? [plugins.middleware] : []), ...(jobs ? [jobs.middleware] : []), ...(recorders?.middleware ?? [])],
    // Log lines, prompts, questions and the rest of what servers send outside results: masked as results are.
    ...(plugins ? { mask: plugins.mask } : {}),
    ...(jobs
      ? {
          jobs: jobs.runner,
          // Plugins' own tools (memory's `memory`) are listed beside the meta-tools, only when such a plugin is on.
          metaTools: [...jobs.metaTools, ...(plugins?.metaTools ?? [])],
          taskStore: ({ session, notify, surface }) => jobs.taskStore({ surface, session, onStatus: notify }),
        }
      : // Listed all the same, so that `list` measures the upfront tool list a client of `serve` gets.
        { metaTools: [jobsListing(), ...(plugins?.metaTools ?? [])] }),
  };
}

/** Ties the jobs and plugins to the core's lifecycle, its forgetting and its catalog; with a shared store, the shared job queue. */
function wire(
  core: Codemux,
  { jobs, plugins, logger, shared }: { jobs: Jobs | undefined; plugins: LoadedPlugins | undefined; logger: Logger; shared: SharedState | undefined },
): void {
  // Running jobs are journaled as interrupted while the servers are still there.
  if (jobs) core.onClose(() => jobs.close(), { before: true });
  forgetAlso(core, { jobs, plugins, logger, ...(shared ? { shared } : {}) });
  shareJobQueue(jobs, core, shared);
  if (plugins) {
    // pin records every tool's definition as the catalog changes, not only at its first call.
    core.onToolsChanged(() => void plugins.toolsChanged(core.tools().entries()));
    // An approval (here, by codemux approve, or on another instance) shows a tool held back again.
    plugins.onRelease(() => core.rescreen());
    core.onClose(() => plugins.close());
  }
}

/** The config file's `plugins` section, loaded; undefined when it has none. */
export async function pluginsOf({
  config,
  reloadable,
  logger,
  retention,
  keep,
  rateBuckets,
  sharedStore,
  pinRecords,
  sharedLists,
  scanMode,
}: {
  config: { raw: Record<string, unknown>; file: string } | undefined;
  /** The config's `security.scan`: "quarantine" keeps its approvals in the pin book (see `loadPlugins`). */
  scanMode?: (config: unknown) => "quarantine" | "warn" | "off";
  /** Load them even without a plugins section (an edit may add one while serving). */
  reloadable?: boolean;
  logger: Logger;
  retention: Retention | undefined;
  keep?: ResultKeeper["keep"];
  rateBuckets?: RateBuckets;
  sharedStore?: Store;
  pinRecords?: RecordTable;
  sharedLists?: SharedLists;
}): Promise<LoadedPlugins | undefined> {
  // The scan's quarantine needs the pin book (its approvals) even without a plugins section.
  const quarantine = config !== undefined && scanMode?.(config.raw) === "quarantine";
  if (config === undefined || (config.raw.plugins === undefined && !reloadable && !quarantine)) return undefined;
  return loadPlugins({
    config: config.raw,
    configFile: config.file,
    logger,
    dataDir: codemuxHome(),
    ...(keep ? { results: { keep } } : {}),
    ...(rateBuckets ? { rateBuckets } : {}),
    ...(sharedStore ? { sharedStore } : {}),
    ...(pinRecords ? { pinRecords } : {}),
    ...(sharedLists ? { sharedLists } : {}),
    ...(scanMode ? { scanMode } : {}),
    ...(retention ? { retentionMs: (_kind: "audit", principal: string) => retentionFor(retention, "auditMs", principal) } : {}),
  });
}

/**
 * What `core.forget` deletes besides the core's own: the principal's jobs, what plugins keep for it (audit
 * lines), and with a shared store what every other instance holds (asked first), then its job records,
 * queued jobs and cached answers there (after the jobs: one this instance cancels writes its record before it goes).
 */
export function forgetAlso(
  core: Pick<CodemuxLifecycle, "onForget">,
  {
    jobs,
    plugins,
    shared,
    logger,
  }: { jobs: { forget(principal: string): Promise<number> } | undefined; plugins: LoadedPlugins | undefined; shared?: SharedState; logger: Logger },
): void {
  if (jobs) core.onForget(async (principal) => ({ jobs: await jobs.forget(principal) }));
  if (plugins) core.onForget((principal) => plugins.forget(principal));
  if (!shared) return;
  // The other instances first: they hold the principal's results and jobs in memory, and cancel its jobs running there.
  core.onForget((principal, { elsewhere }) => (elsewhere ? forgetElsewhere(shared, principal, logger) : {}), { before: true });
  core.onForget((principal) => forgetShared(shared, principal));
}

/** The catalog cache: shared in Redis (a new instance answers at once), else files under codemux's folder; none with --no-cache. */
function cacheOf(cache: boolean, shared: SharedState | undefined): { cacheDir?: string; cacheStore?: SharedState["cacheStore"] } {
  if (!cache) return {};
  return shared?.cacheStore ? { cacheStore: shared.cacheStore } : { cacheDir: join(codemuxHome(), "cache") };
}

function resultFormatFrom(format: ResultFormat | undefined): { resultFormat?: ResultFormat } {
  return format === undefined ? {} : { resultFormat: format };
}

function spillOf(bytes: number | undefined): { largeResultBytes?: number } {
  return bytes === undefined ? {} : { largeResultBytes: bytes };
}

/** Where snippets and bundles are kept: an explicit folder, or with CODEMUX_DEBUG_EXEC=1 (not over HTTP) codemux's debug folder. */
function keepBundles(options: Pick<StartOptions, "keepBundlesDir" | "remote">): { keepBundlesDir?: string } {
  if (options.keepBundlesDir) return { keepBundlesDir: resolve(options.keepBundlesDir) };
  if (process.env.CODEMUX_DEBUG_EXEC === "1" && !options.remote) return { keepBundlesDir: join(codemuxHome(), "debug", "exec") };
  return {};
}

/**
 * The folder the built-in filesystem server may read and write: `--root`, else the current folder.
 * Clients often start servers in / or the home folder, which would expose all of it: refused unless asked for.
 */
export function builtInRoot(opts: { root?: string | undefined; allowBroadRoot?: boolean | undefined }, cwd = process.cwd()): string {
  const root = resolve(cwd, opts.root ?? ".");
  if (!opts.allowBroadRoot && (root === resolve("/") || root === resolve(homedir()))) {
    throw new RuntimeError(
      "ROOT_TOO_BROAD",
      `The built-in filesystem server would serve ${root} and everything under it. Give a project folder with --root DIR (or start codemux there), a config with --config, or --allow-broad-root if you mean it.`,
    );
  }
  return root;
}

/** `CODEMUX_CATALOG_CACHE_TTL_MS`: a whole number of milliseconds from 1 to a year; unset or empty means no TTL. */
function cacheTtlOf(value: string | undefined): { catalogCacheTtlMs?: number } {
  if (value === undefined || value.trim() === "") return {};
  const ms = /^\d{1,12}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!(ms >= 1 && ms <= 31_536_000_000))
    throw new RuntimeError(
      "SETTING_INVALID",
      `CODEMUX_CATALOG_CACHE_TTL_MS is "${value.slice(0, 40)}"; give milliseconds from 1 to 31536000000 (a year), e.g. 86400000 for a day.`,
    );
  return { catalogCacheTtlMs: ms };
}
