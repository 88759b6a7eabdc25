import { ConfigError, markSelf, type Logger } from "@codemux/pool";
import { loadPlugins, type LoadedPlugins, type ResultKeeper } from "@codemux/hooks";
import { createJobs } from "@codemux/jobs";
import { Codemux, resolveConfig } from "@codemux/server";
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { codemuxHome, defaultConfig } from "./default-config";
import { LOG_LEVELS, stderrLogger, type LogLevel } from "./logger";

/** A failure the user caused or can fix; printed as one sentence, with an exit code (2: usage, as the README says). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

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
}

export async function startCore(command: Command, context: RunContext, options: StartOptions): Promise<{ core: Codemux; logger: Logger; level: LogLevel }> {
  const opts = command.optsWithGlobals<GlobalOptions>();
  const level = opts.logLevel ?? envLogLevel() ?? options.defaultLevel;
  const logger = stderrLogger(level);
  // A config that lists codemux itself (a client's own file) must not make it start itself.
  markSelf(process.argv[1]);
  const config = await resolveConfig({
    ...(opts.config ? { configPath: opts.config } : {}),
    inline: context.inline,
    fallback: () => defaultConfig(builtInRoot(opts)),
  });
  for (const warning of config.warnings ?? []) logger.warn(warning);
  const configFile = configFileOf(config.source, opts.config);
  // Plugins load before the core (their middleware goes into it); summarize keeps full results in the core's store.
  let core: Codemux | undefined;
  const plugins = await pluginsOf(configFile, logger, (tool, text, owner) => (core as Codemux).results.keep(tool, text, owner));
  // Background jobs only when serving: a one-shot command would end its own jobs when it exits.
  const jobs = options.serving ? createJobs({ dataDir: codemuxHome(), logger }) : undefined;
  core = new Codemux({
    config,
    // What a server whose entry sets no `roots` is told when it asks: --root, or the folder the built-in default serves.
    ...(opts.root !== undefined || config.source === "built-in default" ? { root: builtInRoot(opts) } : {}),
    mode: opts.mode,
    logger,
    logCalls: level === "debug",
    ...(opts.lazy ? { poolOptions: { lazy: true } } : {}),
    ...keepBundles(options),
    dataDir: codemuxHome(),
    ...(opts.cache ? { cacheDir: join(codemuxHome(), "cache") } : {}),
    // Client configs can set environment variables where they cannot add flags.
    ...(opts.refreshCache || process.env.CODEMUX_REFRESH_CACHE === "1" ? { refreshCache: true } : {}),
    // A one-shot command prints the whole result: a handle would die with the process.
    ...(options.serving ? {} : { largeResultBytes: Number.POSITIVE_INFINITY }),
    middleware: [...(plugins ? [plugins.middleware] : []), ...(jobs ? [jobs.middleware] : [])],
    ...(jobs
      ? {
          jobs: jobs.runner,
          metaTools: jobs.metaTools,
          taskStore: ({ session, notify }) => jobs.taskStore({ core: core as Codemux, session, onStatus: notify }),
        }
      : {}),
  });
  // Running jobs are journaled as interrupted while the servers are still there.
  if (jobs) core.onClose(() => jobs.close(), { before: true });
  if (plugins) {
    const started = core;
    // pin records every tool's definition as the catalog changes, not only at its first call.
    started.on("toolsChanged", () => void plugins.toolsChanged(started.catalog.entries()));
    started.onClose(() => plugins.close());
  }
  core.start({ warmSandbox: options.serving === true });
  return { core, logger, level };
}

/** The config file being served, when there is one (not the built-in default, not only inline servers). */
export function configFileOf(source: string, explicit: string | undefined): string | undefined {
  const named = explicit ?? process.env.CODEMUX_CONFIG;
  if (named) return resolve(named);
  if (source === "built-in default" || source.startsWith("inline")) return undefined;
  return resolve(source.replace(/ \+ servers given inline$/, ""));
}

/** The config file's `plugins` section, loaded; undefined when it has none. */
async function pluginsOf(configFile: string | undefined, logger: Logger, keep: ResultKeeper["keep"]): Promise<LoadedPlugins | undefined> {
  if (!configFile) return undefined;
  const raw = JSON.parse(await readFile(configFile, "utf8")) as { plugins?: unknown };
  if (raw.plugins === undefined) return undefined;
  return loadPlugins({ config: raw, configFile, logger, dataDir: codemuxHome(), results: { keep } });
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

/** Runs a one-shot command on a core with live servers, and always closes it. */
export async function withCore<T>(
  command: Command,
  context: RunContext,
  ...args: [work: (core: Codemux) => Promise<T>] | [options: Partial<StartOptions>, work: (core: Codemux) => Promise<T>]
): Promise<T> {
  const [options, work] = args.length === 1 ? [{}, args[0]] : args;
  const { core } = await startCore(command, context, { defaultLevel: "warn", ...options });
  try {
    await core.settled();
    return await work(core);
  } finally {
    await core.close();
  }
}

/** A config error is the user's to fix: exit 2 with its sentence. */
export function isUsageFailure(error: unknown): error is Error {
  return error instanceof UsageError || error instanceof ConfigError;
}
