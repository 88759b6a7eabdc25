import { LOG_LEVELS, type LogLevel } from "@codemux/core";
import type { CodemuxPorts } from "@codemux/server";
import { loadCodemuxConfig, startCodemux, type CodemuxConfig, type Started, type StartOptions as RuntimeStartOptions } from "@codemux/runtime";
import type { Command } from "commander";
import { Writable } from "node:stream";
import { InterruptedError, UsageError } from "./errors";
import { cliLogger } from "./logger";

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

/** How a command starts codemux: the runtime's start options the command decides, and how its log reads. */
export interface StartOptions extends Omit<RuntimeStartOptions, "level" | "logger" | "mode" | "root" | "allowBroadRoot" | "lazy" | "cache" | "refreshCache"> {
  defaultLevel: LogLevel;
  /** Log lines the command shows otherwise (list's table has each server's failure). */
  omitLog?: RegExp;
  /** The config the command already loaded (it needed a section before the start): read once, not again here. */
  config?: CodemuxConfig;
}

/** Starts codemux (`startCodemux` of @codemux/runtime) on the command line's config, global options and log level. */
export async function startCore(command: Command, context: RunContext, options: StartOptions): Promise<Started> {
  const opts = command.optsWithGlobals<GlobalOptions>();
  const level = opts.logLevel ?? envLogLevel() ?? options.defaultLevel;
  const { defaultLevel: _defaultLevel, omitLog, config, ...start } = options;
  const loaded = config ?? (await loadCodemuxConfig({ configPath: opts.config, inline: context.inline, serving: options.serving === true }));
  return await startCodemux(loaded, {
    ...start,
    level,
    logger: cliLogger(level, omitLog),
    mode: opts.mode,
    cache: opts.cache,
    ...(opts.root !== undefined ? { root: opts.root } : {}),
    ...(opts.allowBroadRoot ? { allowBroadRoot: true } : {}),
    ...(opts.lazy ? { lazy: true } : {}),
    ...(opts.refreshCache ? { refreshCache: true } : {}),
  });
}

/** `CODEMUX_LOG_LEVEL`, for client configs that can set environment variables but not flags. */
function envLogLevel(): LogLevel | undefined {
  const level = process.env.CODEMUX_LOG_LEVEL?.toLowerCase();
  if (level === undefined || level === "") return undefined;
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new UsageError(`CODEMUX_LOG_LEVEL is "${level}"; use one of ${LOG_LEVELS.join(", ")}.`);
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
