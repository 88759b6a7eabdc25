import type { ErrorClass } from "@codemux/core";
import { UnauthorizedError } from "@modelcontextprotocol/client";
import { PoolError, ServerUnavailableError } from "../errors";

/** The reason a server that needs a login shows in `codemux list` and in the errors the model sees; `how` says how to log in. */
export function needsLoginReason(server: string, why = "no login yet", how = `run \`codemux auth login ${server}\``): string {
  return `needs login (${why}): ${how}`;
}

/** A server answered 401 and no stored login (or refresh) could satisfy it; only `codemux auth login` can. */
export class AuthRequiredError extends ServerUnavailableError {
  /** "needs login (why): run `codemux auth login NAME`", the state reason `codemux list` shows. */
  readonly reason: string;

  constructor(server: string, why?: string, options: { cause?: unknown; how?: string } = {}) {
    const reason = needsLoginReason(server, why, options.how);
    super(server, reason, { cause: options.cause, data: { needsLogin: true, sent: false, transient: false } });
    this.reason = reason;
  }

  static override isInstance<T extends ErrorClass>(this: T, value: unknown): value is InstanceType<T> {
    return PoolError.isInstance(value) && value.code === "SERVER_UNAVAILABLE" && value.data?.needsLogin === true;
  }
}

/** True for a failure only a login fixes: our AuthRequiredError, the SDK's UnauthorizedError, or an HTTP 401 left over. */
export function isAuthFailure(error: unknown): boolean {
  if (AuthRequiredError.isInstance(error) || error instanceof UnauthorizedError) return true;
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause !== undefined && cause !== error && (AuthRequiredError.isInstance(cause) || cause instanceof UnauthorizedError);
}
