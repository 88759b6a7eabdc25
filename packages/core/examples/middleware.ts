import { CodemuxError, redactSecrets, stderrLogger, type ToolCallMiddleware } from "@codemux/core";

type QuotaErrorCode = "OVER_QUOTA";
class QuotaError extends CodemuxError<QuotaErrorCode> {
  static override readonly package = "quota";
}

const logger = stderrLogger({ level: "info", prefix: "quota", write: (line) => console.log(line) });
const used = new Map<string, number>();

/** At most two calls per principal; each call is logged with its arguments masked. */
export const quota: ToolCallMiddleware = async (ctx, next) => {
  const count = (used.get(ctx.session.principal) ?? 0) + 1;
  if (count > 2) throw new QuotaError("OVER_QUOTA", `${ctx.session.principal} used its 2 calls; ask an admin for more.`, { data: { limit: 2 } });
  used.set(ctx.session.principal, count);
  logger.info(`${ctx.session.principal} calls ${ctx.entry.qualifiedName} ${redactSecrets(JSON.stringify(ctx.arguments))}`);
  return next(ctx);
};

const error = new QuotaError("OVER_QUOTA", "over");
console.log(QuotaError.isInstance(error), CodemuxError.isInstance(error), error.code);
