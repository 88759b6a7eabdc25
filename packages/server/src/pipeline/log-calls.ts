import type { Logger, ToolCallMiddleware } from "@codemux/core";

/** Logs every downstream call at debug level: name, origin, duration and outcome (never the arguments: they may hold secrets). */
export function logCalls(logger: Logger): ToolCallMiddleware {
  return async (ctx, next) => {
    const started = performance.now();
    const took = () => `${Math.round(performance.now() - started)} ms`;
    try {
      const result = await next(ctx);
      logger.debug(`call ${ctx.entry.qualifiedName} (${ctx.origin}) ${result.isError ? "tool error" : "ok"} in ${took()}`);
      return result;
    } catch (error) {
      logger.debug(
        `call ${ctx.entry.qualifiedName} (${ctx.origin}) failed in ${took()}: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`,
      );
      throw error;
    }
  };
}
