import { RELATED_TASK_META_KEY, type JSONRPCMessage } from "@modelcontextprotocol/client";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/core";

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const RESULT_KEYS = new Set(["jsonrpc", "id", "result"]);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isId = (id: unknown) => typeof id === "string" || Number.isInteger(id);
const onlyKeys = (value: Record<string, unknown>, allowed: Set<string>) => {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
};

/** What the SDK's schema takes as a progress token, and as a request id beside a `_meta`: a string or an integer it can hold exactly. */
const isStringOrSafeInteger = (value: unknown): boolean => typeof value === "string" || Number.isSafeInteger(value);
export const isProgressToken = isStringOrSafeInteger;

/**
 * A request's `_meta` the schema accepts unchanged: at most a progress token beside other keys
 * (clients send one with many calls); a related task, an odd token or a `__proto__` key is the schema's.
 */
function plainRequestMeta(meta: unknown): boolean {
  if (!isRecord(meta) || Object.hasOwn(meta, "__proto__") || meta[RELATED_TASK_META_KEY] !== undefined) return false;
  return meta.progressToken === undefined || isProgressToken(meta.progressToken);
}

/**
 * The common shapes (a request, with at most a progress token in its `_meta`; a notification; a
 * result) recognized without zod, which costs more than the rest of a proxied call; anything else
 * (other `_meta`, errors, odd keys) goes through `JSONRPCMessageSchema`, so what is accepted and
 * refused is exactly the SDK's.
 */
export function jsonRpcMessage(value: unknown): JSONRPCMessage | undefined {
  if (isRecord(value) && value.jsonrpc === "2.0") {
    if (typeof value.method === "string") {
      const params = value.params;
      const request = "id" in value;
      const plainParams =
        params === undefined || (isRecord(params) && (!("_meta" in params) || (request && isStringOrSafeInteger(value.id) && plainRequestMeta(params._meta))));
      if (plainParams && onlyKeys(value, REQUEST_KEYS) && (!request || isId(value.id))) return value as JSONRPCMessage;
    } else if ("result" in value && isId(value.id) && isRecord(value.result) && !("_meta" in value.result) && onlyKeys(value, RESULT_KEYS)) {
      return value as JSONRPCMessage;
    }
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
