import type { CallContext, NextCall, ToolCallMiddleware } from "./context";

/** Folds middleware around a final step, first in the list outermost; each may stop the chain by not calling `next`. */
export function composeMiddleware(middleware: readonly ToolCallMiddleware[], last: NextCall): NextCall {
  return middleware.reduceRight<NextCall>((next, step) => (ctx: CallContext) => step(ctx, next), last);
}
