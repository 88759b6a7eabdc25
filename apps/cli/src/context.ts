import {
  LOG_LEVELS,
  NO_MASK,
  redactingLogger,
  type LogLevel,
  type Logger,
  type RateBuckets,
  type RecordTable,
  type SecretMask,
  type SharedLists,
  type Store,
  type ToolCallMiddleware,
} from "@codemux/core";
import { markSelf, parseJsonc, type PoolConfig, readConfigText } from "@codemux/pool";
import { Redactor, loadPlugins, type LoadedPlugins, type ResultKeeper } from "@codemux/hooks";
import type { HttpSettings, UiSources } from "@codemux/http";
import { createJobs, jobsListing, type JobManager } from "@codemux/jobs";
import {
  Codemux,
  CoreLink,
  codemuxHome,
  type CodemuxLifecycle,
  type CodemuxPorts,
  policiesOf,
  retentionFor,
  scanModeOf,
  type ResultFormat,
  type Retention,
} from "@codemux/server";
import type { Command } from "commander";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import { defaultConfig, graphsFolder } from "./default-config";
import { InterruptedError, UsageError } from "./errors";
import { cliLogger } from "./logger";
import { uiSources } from "./ui-sources";
import { forgetElsewhere, forgetShared } from "./forget-shared";
import { shareJobQueue } from "./job-queue";
import { startTracing } from "./tracing";
import { configReloader, type ConfigReload } from "./reload";
import { loadCodemuxConfig, type CodemuxConfig } from "./codemux-config";
import type { SharedState } from "./shared-state";

/** The options every command shares. */
export interface GlobalOptions {
  config?: string;
  mode: string;
  logLevel?: LogLevel;
  cache: boolean;
  refreshCache?: boolean;
  lazy?: boolean;
  root?: string;
  allowBroadRoot?: boolean;
}

export interface RunContext {
  /** Servers given after the first `--`. */
  inline: string[];
  stdout: NodeJS.WritableStream;
  /** Exit code of a command that finished with a result (non-zero when a tool reported an error). */
  exitCode: number;
}

/** Makes the core a command runs on: the config (file, inline, or the built-in default), the logger, the cache. */
export interface StartOptions {
  defaultLevel: LogLevel;
  serving?: boolean;
  /** Serving over HTTP: CODEMUX_DEBUG_EXEC is ignored there unless `debugExec` says so, since bundles hold snippet text. */
  remote?: boolean;
  /** Keep snippets and their bundles (`exec --keep-bundle DIR`, `serve --debug-exec`). */
  keepBundlesDir?: string;
  /** `serve --spill-bytes`: results larger are kept as handles. */
  spillBytes?: number;
  /** `serve --result-format`: over the config's `resultFormat`. */
  resultFormat?: ResultFormat;
  /** Log lines the command shows otherwise (list's table has each server's failure). */
  omitLog?: RegExp;
  /**
   * Start nothing yet (no server, no jobs journal): the caller calls the returned `begin()` when the
   * first real request comes (`serve` over stdio, which a 2026-07-28 client may only probe).
   */
  deferStart?: boolean;
  /** State shared with other instances (`--store redis://...`): kept results, the catalog cache and rate-limit buckets live there. */
  shared?: SharedState;
  /** Served to several principals (HTTP with more than one token, a token file, or OAuth): the built-in default keeps their memories apart. */
  manyPrincipals?: boolean;
  /** The config the command already loaded (it needed a section before the start): read once, not again here. */
  config?: CodemuxConfig;
  /** A front end's own middleware (the HTTP server's recorders), made with the core's mask and composed into its pipeline after the plugins' and the jobs'. */
  frontEnd?: (mask: SecretMask) => ToolCallMiddleware[];
}

/** A config file as parsed JSON: the same JSONC reading as the servers' (resolveConfig refuses a file that does not parse). */
export async function readRawConfig(configFile: string | undefined): Promise<Record<string, unknown> | undefined> {
  return configFile ? (parseJsonc(await readConfigText(configFile), configFile).value as Record<string, unknown>) : undefined;
}

export async function startCore(command: Command, context: RunContext, options: StartOptions): Promise<Started> {
  const opts = command.optsWithGlobals<GlobalOptions>();
  const level = opts.logLevel ?? envLogLevel() ?? options.defaultLevel;
  const loaded = options.config ?? (await loadCodemuxConfig({ configPath: opts.config, inline: context.inline, serving: options.serving === true }));
  return await startCodemux(loaded, { ...options, globals: opts, level });
}

/** What a start of codemux is; `startCore` reads it from the command line, a test or an embedding gives it. */
export type Started = Awaited<ReturnType<typeof startCodemux>>;

/**
 * Starts codemux on a config read once (`loadCodemuxConfig`): the plugins, the jobs and the core composed
 * with their middleware, shared state when given; what `serve`, `exec` and the other commands run on.
 */
export async function startCodemux(
  loaded: CodemuxConfig,
  options: StartOptions & { globals: GlobalOptions; level: LogLevel },
): Promise<{
  core: Codemux;
  /** The config this start read (once) and served. */
  config: CodemuxConfig;
  logger: Logger;
  level: LogLevel;
  http: HttpSettings;
  ui: UiSources;
  jobs?: JobManager;
  begin: () => void;
  /** Applies the edited config file: servers, policies and plugins as one change (the file watch, /restart). */
  reloader: { reload(config: PoolConfig): Promise<ConfigReload> };
}> {
  const { globals: opts, level } = options;
  // codemux's own lines quote servers (their stderr, log lines, errors): masked by the redact plugin's patterns once it loads.
  let masking: LoadedPlugins | undefined;
  const logger = redactingLogger(cliLogger(level, options.omitLog), (text) => masking?.mask.text(text) ?? text);
  // A config that lists codemux itself (a client's own file) must not make it start itself.
  markSelf(process.argv[1]);
  const config = loaded.servers ?? defaultConfig({ cwd: builtInRoot(opts), manyPrincipals: options.manyPrincipals === true });
  for (const warning of loaded.servers ? loaded.warnings : [...(config.warnings ?? []), ...loaded.warnings]) logger.warn(warning);
  if (config.source === "built-in default" && options.manyPrincipals)
    logger.info(`the built-in default serves several principals: each gets a memory server and graph of its own (under ${graphsFolder()})`);
  const { file: configFile, raw, retention } = loaded;
  const serving = loaded.serving ?? { http: {}, jobs: {} };
  // Plugins and jobs are made before the core (their middleware goes into it); they reach its result store and policies through the link it binds.
  const link = new CoreLink();
  // The config's `tracing` may turn traces on, before anything that makes spans starts (the OTEL_* variables may have already).
  await startTracing(process.env, loaded.tracing);
  const plugins = await pluginsOf({
    config: raw && configFile ? { raw, file: configFile } : undefined,
    // Serving from a file: loaded even without a plugins section, so that an edit can turn plugins on.
    reloadable: options.serving === true,
    logger,
    retention,
    keep: link.keep,
    ...(options.shared?.rateBuckets ? { rateBuckets: options.shared.rateBuckets } : {}),
    ...(options.shared?.pluginStore ? { sharedStore: options.shared.pluginStore } : {}),
    ...(options.shared?.pinRecords ? { pinRecords: options.shared.pinRecords } : {}),
    ...(options.shared?.memories ? { sharedLists: options.shared.memories } : {}),
    ...(configFile ? { scanMode: (config: unknown) => scanModeOf(config, configFile) } : {}),
  });
  masking = plugins;
  const scanMode = loaded.scan;
  const http = serving.http;
  // Background jobs only when serving: a one-shot command would end its own jobs when it exits.
  const jobs = options.serving
    ? createJobs({
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
        // The policies live in the core, made just below; a job starts only once it serves.
        jobsAtOnce: (session) => link.grant(session)?.concurrentJobs,
      })
    : undefined;
  const core = new Codemux({
    config,
    link,
    // The pin plugin judges what the scan flags (and changed definitions): the model sees the approved definition or nothing.
    scan: { mode: scanMode, ...(plugins ? { gate: (tools) => plugins.screen(tools) } : {}) },
    // What a server whose entry sets no `roots` is told when it asks: --root, or the folder the built-in default serves.
    ...(opts.root !== undefined || config.source === "built-in default" ? { root: builtInRoot(opts) } : {}),
    mode: opts.mode,
    logger,
    ...(retention ? { retention } : {}),
    ...resultFormatFrom(options.resultFormat ?? loaded.resultFormat),
    ...(loaded.dispatchFiles ? { dispatchFiles: loaded.dispatchFiles } : {}),
    logCalls: level === "debug",
    ...(opts.lazy ? { poolOptions: { lazy: true } } : {}),
    ...keepBundles(options),
    dataDir: codemuxHome(),
    ...cacheOf(opts.cache, options.shared),
    ...(options.shared?.resultStore ? { resultStore: options.shared.resultStore } : {}),
    ...(options.shared?.skillShelf ? { sharedSkills: options.shared.skillShelf } : {}),
    // A policy's calls per minute, counted on every instance together.
    ...(options.shared?.rateBuckets ? { policyBuckets: options.shared.rateBuckets } : {}),
    ...(options.shared?.scaleOut ? { instanceId: options.shared.instanceId } : {}),
    ...(loaded.serving?.stateKey !== undefined && !process.env.CODEMUX_STATE_KEY ? { stateKey: loaded.serving.stateKey } : {}),
    // Client configs can set environment variables where they cannot add flags.
    ...(opts.refreshCache || process.env.CODEMUX_REFRESH_CACHE === "1" ? { refreshCache: true } : {}),
    ...cacheTtlOf(process.env.CODEMUX_CATALOG_CACHE_TTL_MS),
    // A one-shot command prints the whole result: a handle would die with the process. --spill-bytes wins over the config's.
    ...(options.serving ? spillOf(options.spillBytes ?? serving.spillBytes) : { largeResultBytes: Number.POSITIVE_INFINITY }),
    middleware: [...(plugins ? [plugins.middleware] : []), ...(jobs ? [jobs.middleware] : []), ...(options.frontEnd?.(plugins?.mask ?? NO_MASK) ?? [])],
    // Log lines, prompts, questions and the rest of what servers send outside results: masked as results are.
    ...(plugins ? { mask: plugins.mask } : {}),
    ...(loaded.policies ? { policies: loaded.policies } : {}),
    // A reload (the file watch, /restart) reads the policies again with the servers; a mistake keeps the last good ones.
    ...(options.serving && configFile
      ? { reloadPolicies: async () => policiesOf(parseJsonc(await readConfigText(configFile), configFile).value, configFile) }
      : {}),
    ...(jobs
      ? {
          jobs: jobs.runner,
          // Plugins' own tools (memory's `memory`) are listed beside the meta-tools, only when such a plugin is on.
          metaTools: [...jobs.metaTools, ...(plugins?.metaTools ?? [])],
          taskStore: ({ session, notify, surface }) => jobs.taskStore({ surface, session, onStatus: notify }),
        }
      : // Listed all the same, so that `list` measures the upfront tool list a client of `serve` gets.
        { metaTools: [jobsListing(), ...(plugins?.metaTools ?? [])] }),
  });
  // Running jobs are journaled as interrupted while the servers are still there.
  if (jobs) core.onClose(() => jobs.close(), { before: true });
  forgetAlso(core, { jobs, plugins, logger, ...(options.shared ? { shared: options.shared } : {}) });
  shareJobQueue(jobs, core, options.shared);
  if (plugins) {
    // pin records every tool's definition as the catalog changes, not only at its first call.
    core.onToolsChanged(() => void plugins.toolsChanged(core.tools().entries()));
    // An approval (here, by codemux approve, or on another instance) shows a tool held back again.
    plugins.onRelease(() => core.rescreen());
    core.onClose(() => plugins.close());
  }
  // Shared skills are read before serving; Redis not there yet: served from what arrives once it is (the shelf re-reads on reconnect).
  await core.refreshSkills().catch((error: Error) => logger.warn(`skills: ${error.message}`));
  let begun = false;
  const begin = () => {
    if (begun) return;
    begun = true;
    core.start({ warmSandbox: options.serving === true });
    // Jobs that a dead process left running are marked interrupted now, not at the first jobs call.
    void jobs?.recover().catch(() => undefined);
  };
  if (!options.deferStart) begin();
  const reloader = configReloader(core, plugins, {
    read: () => readRawConfig(configFile),
    scanMode: configFile ? (config) => scanModeOf(config, configFile) : undefined,
  });
  return { core, config: loaded, logger, level, http, ui: uiSources(plugins, jobs), ...(jobs ? { jobs: jobs.manager } : {}), begin, reloader };
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
function keepBundles(options: StartOptions): { keepBundlesDir?: string } {
  if (options.keepBundlesDir) return { keepBundlesDir: resolve(options.keepBundlesDir) };
  if (process.env.CODEMUX_DEBUG_EXEC === "1" && !options.remote) return { keepBundlesDir: join(codemuxHome(), "debug", "exec") };
  return {};
}

/** `CODEMUX_LOG_LEVEL`, for client configs that can set environment variables but not flags. */
function envLogLevel(): LogLevel | undefined {
  const level = process.env.CODEMUX_LOG_LEVEL?.toLowerCase();
  if (level === undefined || level === "") return undefined;
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new UsageError(`CODEMUX_LOG_LEVEL is "${level}"; use one of ${LOG_LEVELS.join(", ")}.`);
}

/**
 * The folder the built-in filesystem server may read and write: `--root`, else the current folder.
 * Clients often start servers in / or the home folder, which would expose all of it: refused unless asked for.
 */
export function builtInRoot(opts: Pick<GlobalOptions, "root" | "allowBroadRoot">, cwd = process.cwd()): string {
  const root = resolve(cwd, opts.root ?? ".");
  if (!opts.allowBroadRoot && (root === resolve("/") || root === resolve(homedir()))) {
    throw new UsageError(
      `The built-in filesystem server would serve ${root} and everything under it. Give a project folder with --root DIR (or start codemux there), a config with --config, or --allow-broad-root if you mean it.`,
    );
  }
  return root;
}

/**
 * Runs a one-shot command on a core with live servers, and always closes it. Ctrl+C (or SIGTERM) ends it
 * as interrupted, not with the failure of a call whose server the shutdown stops.
 */
export async function withCore<T>(
  command: Command,
  context: RunContext,
  ...args: [work: (core: CodemuxPorts) => Promise<T>] | [options: Partial<StartOptions>, work: (core: CodemuxPorts) => Promise<T>]
): Promise<T> {
  const [options, work] = args.length === 1 ? [{}, args[0]] : args;
  const interrupt = listenForInterrupt(context);
  try {
    const { core } = await startCore(command, context, { defaultLevel: "warn", ...options });
    try {
      const done = core.settled().then(() => work(core));
      done.catch(() => undefined);
      return await Promise.race([done, interrupt.interrupted]);
    } finally {
      await core.close();
    }
  } finally {
    interrupt.dispose();
  }
}

/**
 * Rejects with an InterruptedError at SIGINT or SIGTERM, and from then on drops what the command prints: how its
 * work ends (a call whose server the shutdown stops) is not reported. While it listens, the pool's own handler stands aside.
 */
function listenForInterrupt(context: RunContext): { interrupted: Promise<never>; dispose: () => void } {
  let reject: (error: Error) => void = () => undefined;
  const interrupted = new Promise<never>((_, fail) => {
    reject = fail;
  });
  // A signal before anyone awaits this is not an unhandled rejection: the race picks it up.
  interrupted.catch(() => undefined);
  const onSignal = (signal: NodeJS.Signals) => {
    context.stdout = new Writable({ write: (_chunk, _encoding, next) => next() });
    reject(new InterruptedError(signal));
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  return { interrupted, dispose: () => process.off("SIGINT", onSignal).off("SIGTERM", onSignal) };
}

/** `CODEMUX_CATALOG_CACHE_TTL_MS`: a whole number of milliseconds from 1 to a year; unset or empty means no TTL. */
function cacheTtlOf(value: string | undefined): { catalogCacheTtlMs?: number } {
  if (value === undefined || value.trim() === "") return {};
  const ms = /^\d{1,12}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!(ms >= 1 && ms <= 31_536_000_000))
    throw new UsageError(`CODEMUX_CATALOG_CACHE_TTL_MS is "${value.slice(0, 40)}"; give milliseconds from 1 to 31536000000 (a year), e.g. 86400000 for a day.`);
  return { catalogCacheTtlMs: ms };
}
