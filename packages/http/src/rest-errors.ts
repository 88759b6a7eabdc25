import { CatalogError } from "@codemux/catalog";
import { PoolError } from "@codemux/pool";
import { CodemuxError } from "@codemux/server";
import { HttpError } from "./errors";

/**
 * The HTTP answer for a failure of the core: the user's mistakes are 4xx with their sentence,
 * a server that is down is 503 with Retry-After, a timeout 504; anything else is a 500 whose
 * message says only that codemux failed (the detail goes to the log, never to the client).
 */
export function toHttpError(error: unknown): HttpError {
  if (HttpError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (CodemuxError.isInstance(error)) {
    switch (error.code) {
      case "BAD_REQUEST":
        return new HttpError("bad_request", message);
      case "INVALID_ARGUMENTS":
        return new HttpError("invalid_arguments", message, { data: { problems: (error.data?.problems as string[] | undefined) ?? [] } });
      case "RESULT_NOT_FOUND":
      case "UNKNOWN_META_TOOL":
        return new HttpError("not_found", message);
      case "STORE_FAILED":
        break;
    }
  }
  if (CatalogError.isInstance(error))
    return new HttpError("unknown_tool", message, { data: { suggestions: (error.data?.suggestions as string[] | undefined) ?? [] } });
  if (PoolError.isInstance(error)) {
    switch (error.code) {
      case "SERVER_UNAVAILABLE":
      case "SERVER_DISCONNECTED":
        return new HttpError("server_unavailable", message, { headers: { "retry-after": "5" } });
      case "SERVER_NOT_FOUND":
      case "TOOL_NOT_FOUND":
        return new HttpError("unknown_tool", message);
      case "CALL_TIMEOUT":
        return new HttpError("timeout", message);
      case "CALL_CANCELLED":
        return new HttpError("cancelled", message);
      case "DOWNSTREAM_ERROR":
        return new HttpError("downstream_error", message);
      default:
        break;
    }
  }
  return new HttpError("internal", "codemux failed to answer this request; the server log has the details (search it for the request id).", { cause: error });
}
