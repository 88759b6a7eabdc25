import { CatalogError } from "@codemux/catalog";
import { isCodemuxError, isSharedStateDown } from "@codemux/core";
import { PoolError } from "@codemux/pool";
import { errorText, REST_HINTS, ServerError } from "@codemux/server";
import { HttpError } from "./errors";

/**
 * The HTTP answer for a failure of the core: the user's mistakes are 4xx with their sentence,
 * a server that is down is 503 with Retry-After, a timeout 504; anything else is a 500 whose
 * message says only that codemux failed (the detail goes to the log, never to the client).
 */
export function toHttpError(error: unknown): HttpError {
  if (HttpError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (ServerError.isInstance(error)) {
    switch (error.code) {
      case "BAD_REQUEST":
        return new HttpError("BAD_REQUEST", message);
      case "INVALID_ARGUMENTS":
        return new HttpError("INVALID_ARGUMENTS", message, { data: { problems: (error.data?.problems as string[] | undefined) ?? [] } });
      case "RESULT_NOT_FOUND":
      case "UNKNOWN_META_TOOL":
      case "UNKNOWN_SERVER":
        return new HttpError("NOT_FOUND", message);
      case "POLICY_REFUSED":
        return new HttpError("FORBIDDEN", message);
      case "POLICY_RATE_LIMITED":
        return new HttpError("QUOTA", message, { headers: { "retry-after": String(Math.ceil(Number(error.data?.retryAfterMs ?? 1000) / 1000)) } });
      case "STORE_FAILED":
        break;
    }
  }
  if (CatalogError.isInstance(error))
    return new HttpError("UNKNOWN_TOOL", errorText(error, { hints: REST_HINTS }), {
      data: { suggestions: (error.data?.suggestions as string[] | undefined) ?? [] },
    });
  if (PoolError.isInstance(error)) {
    switch (error.code) {
      case "SERVER_UNAVAILABLE":
      case "SERVER_DISCONNECTED":
        return new HttpError("SERVER_UNAVAILABLE", message, { headers: { "retry-after": "5" } });
      case "SERVER_NOT_FOUND":
      case "TOOL_NOT_FOUND":
        return new HttpError("UNKNOWN_TOOL", message);
      case "CALL_TIMEOUT":
        return new HttpError("TIMEOUT", message);
      case "CALL_CANCELLED":
        return new HttpError("CANCELLED", message);
      case "DOWNSTREAM_ERROR":
        return new HttpError("DOWNSTREAM_ERROR", message);
      default:
        break;
    }
  }
  // By code, not class: plugins and the shared store are packages the gateway does not import.
  if (isCodemuxError(error) && error.code === "RATE_LIMITED")
    return new HttpError("QUOTA", message, { headers: { "retry-after": String(Math.max(1, Math.ceil(Number(error.data?.retryAfterMs ?? 1000) / 1000))) } });
  // A plugin's refusal (the guard, a quarantined tool, a confirmation not given) is the caller's answer, not codemux failing.
  if (isCodemuxError(error) && (error.code === "REFUSED" || error.code === "NOT_CONFIRMED" || error.code === "QUARANTINED"))
    return new HttpError("FORBIDDEN", message, { data: { reason: error.code.toLowerCase(), ...(error.data?.plugin ? { plugin: error.data.plugin } : {}) } });
  const down = sharedStateDownIn(error);
  if (down) return new HttpError("SERVER_UNAVAILABLE", down.message, { headers: { "retry-after": "5" } });
  return new HttpError("INTERNAL", "codemux failed to answer this request; the server log has the details (search it for the request id).", { cause: error });
}

/** How many causes deep a failure is searched for the shared store's: a fail-closed plugin wraps it once, so a few suffice. */
const MAX_CAUSES = 4;

/**
 * The shared store's "did not answer" error a failure is or comes from (a fail-closed plugin such as
 * rate-limit wraps it): its sentence names Redis and says to retry, which is the caller's answer.
 */
function sharedStateDownIn(error: unknown): Error | undefined {
  let current = error;
  for (let depth = 0; depth <= MAX_CAUSES && current instanceof Error; depth++) {
    if (isSharedStateDown(current)) return current;
    current = current.cause;
  }
  return undefined;
}
