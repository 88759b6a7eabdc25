import type { CallContext, NextCall, RefusalObserver, ToolCallMiddleware } from "@codemux/core";
import type { ChainInput } from "./chain";
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
  readonly host: PluginHost;
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
  return middlewareOf(host);
}

/** The middleware of a host that already exists (loadPlugins makes one). */
export function middlewareOf(host: PluginHost): PluginMiddleware {
  const chain = host.chain;
  const middleware = async (ctx: CallContext, next: NextCall) => {
    if (chain.empty) return next(ctx);
    await host.start();
    return chain.run(chainInput(ctx), (args) => {
      ctx.arguments = args;
      return next(ctx);
    });
  };
  return Object.assign(middleware, {
    refused: (ctx: CallContext, error: Error) => {
      if (!chain.empty) chain.refused(chainInput(ctx), error);
    },
    ready: () => host.start(),
    close: () => host.close(),
    observe: (observability: Observability | undefined) => host.observe(observability),
    host,
  });
}

/** A call as the plugin chain takes it. */
function chainInput(ctx: CallContext): ChainInput {
  return {
    name: ctx.entry.qualifiedName,
    server: ctx.entry.server,
    tool: ctx.entry.name,
    definition: ctx.entry.tool,
    annotations: ctx.annotations,
    arguments: ctx.arguments,
    origin: ctx.origin,
    session: ctx.session,
    signal: ctx.signal,
    state: ctx.state,
  };
}
