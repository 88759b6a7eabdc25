import { plainJsonRpcMessage } from "@codemux/core";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/core";

/**
 * A JSON-RPC message as the SDK takes it: the common shapes are recognized without zod (core's
 * `plainJsonRpcMessage`; zod costs more than the rest of a proxied call), anything else goes
 * through `JSONRPCMessageSchema`, so what is accepted and refused is exactly the SDK's.
 */
export function jsonRpcMessage(value: unknown): JSONRPCMessage | undefined {
  const plain = plainJsonRpcMessage(value);
  if (plain) return plain as JSONRPCMessage;
  const parsed = JSONRPCMessageSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
