import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const RESULT_KEYS = new Set(["jsonrpc", "id", "result"]);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isId = (id: unknown) => typeof id === "string" || Number.isInteger(id);
const onlyKeys = (value: Record<string, unknown>, allowed: Set<string>) => {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
};

/**
 * The common shapes (a request, a notification, a result) recognized without zod, which costs more
 * than the rest of a proxied call; anything else (`_meta`, errors, odd keys) goes through
 * `JSONRPCMessageSchema`, so what is accepted and refused is exactly the SDK's.
 */
export function jsonRpcMessage(value: unknown): JSONRPCMessage | undefined {
  if (isRecord(value) && value.jsonrpc === "2.0") {
    if (typeof value.method === "string") {
      const params = value.params;
      const plainParams = params === undefined || (isRecord(params) && !("_meta" in params));
      if (plainParams && onlyKeys(value, REQUEST_KEYS) && (!("id" in value) || isId(value.id))) return value as JSONRPCMessage;
    } else if ("result" in value && isId(value.id) && isRecord(value.result) && !("_meta" in value.result) && onlyKeys(value, RESULT_KEYS)) {
      return value as JSONRPCMessage;
    }
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
