import type { CallContext, NextCall, RefusalObserver, ToolCallMiddleware, ToolResult } from "@codemux/core";
import { PluginHost, type PluginHostOptions } from "./host";
import type { Observability, Plugin } from "./types";

/** The call-pipeline middleware of a set of plugins, with their lifecycle. */
export interface PluginMiddleware extends ToolCallMiddleware, RefusalObserver {
  /** Starts the plugins (also done on the first call); rejects naming a plugin whose init failed. */
  ready(): Promise<void>;
  /** Closes the plugins (flushes the audit log, writes pins). */
  close(): Promise<void>;
  /** Attaches the metrics and request-log hooks (the HTTP package's). */
  observe(observability: Observability | undefined): void;
  /** The host of the plugins in force (a reload of `loadPlugins`' set replaces it). */
  readonly host: PluginHost;
}

/** The plugins in force, with the calls running on their chain counted (a reload closes what it replaced once they end). */
export interface PluginGeneration {
  readonly host: PluginHost;
  /** Counts a call in; the function returned counts it out. */
  enter(): () => void;
}

/** Where the middleware finds the plugins in force at each call, and how it closes them. */
export interface GenerationSource {
  current(): PluginGeneration;
  close(): Promise<void>;
  observe(observability: Observability | undefined): void;
}

/**
 * One `ToolCallMiddleware` that runs the plugins around every downstream call, whatever its path
 * (call_tool, execute_code's inner calls, passthrough, REST, jobs). Goes into `CodemuxOptions.middleware`.
 *
 * @example
 * const plugins = pluginMiddleware([auditPlugin({ file: "audit.jsonl" }), cachePlugin({ ttlMs: 60_000 })], { logger });
 * const core = new Codemux({ config, middleware: [plugins] });
 * // ...
 * await core.close(); await plugins.close();
 */
export function pluginMiddleware(plugins: readonly Plugin[], options: PluginHostOptions = {}): PluginMiddleware {
  const host = new PluginHost(plugins, options);
  const generation: PluginGeneration = { host, enter: () => () => undefined };
  return middlewareOf({ current: () => generation, close: () => host.close(), observe: (observability) => host.observe(observability) });
}

/** The middleware of the plugins a source holds: each call runs, start to end, on the chain in force when it began. */
export function middlewareOf(source: GenerationSource): PluginMiddleware {
  // Not async itself: with no plugin in force a call is handed on without the turns an async function's returned promise costs.
  const middleware = (ctx: CallContext, next: NextCall): Promise<ToolResult> => {
    const generation = source.current();
    return generation.host.chain.empty ? next(ctx) : runOn(generation, ctx, next);
  };
  const runOn = async (generation: PluginGeneration, ctx: CallContext, next: NextCall): Promise<ToolResult> => {
    const { host } = generation;
    const leave = generation.enter();
    try {
      // Once started, a call does not wait a turn on start's settled promise.
      if (!host.ready) await host.start();
      return await host.chain.run(ctx, next);
    } finally {
      leave();
    }
  };
  return Object.defineProperties(
    Object.assign(middleware, {
      refused: (ctx: CallContext, error: Error) => {
        const { chain } = source.current().host;
        if (!chain.empty) chain.refused(ctx, error);
      },
      ready: () => source.current().host.start(),
      close: () => source.close(),
      observe: (observability: Observability | undefined) => source.observe(observability),
    }),
    { host: { get: () => source.current().host, enumerable: true } },
  ) as PluginMiddleware;
}
