import { jsonRpcMessage } from "@codemux/core";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/core";
import { describe, expect, it } from "vitest";

const messages: unknown[] = [
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: {} } },
  { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "x", _meta: { progressToken: 7 } } },
  { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "x", _meta: { client: "k", progressToken: "p" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, result: { roots: [] } },
  { jsonrpc: "2.0", id: 3, error: { code: -1, message: "no" } },
  // SDK v2 takes any _meta in a result (v1 refused a progress token that was no string or number).
  { jsonrpc: "2.0", id: 7, result: { _meta: { progressToken: {} } } },
  { jsonrpc: "2.0", id: 1, method: "ping", extra: true },
  { jsonrpc: "2.0", id: null, method: "ping" },
  { jsonrpc: "2.0", id: 1.5, method: "ping" },
  { jsonrpc: "1.0", id: 4, method: "ping" },
  { jsonrpc: "2.0", id: 5, method: "ping", params: { _meta: { progressToken: true } } },
  { jsonrpc: "2.0", id: 6, method: "ping", params: [1] },
  { jsonrpc: "2.0", id: 2 ** 60, method: "x", params: { _meta: { progressToken: 1 } } },
  { jsonrpc: "2.0", id: 8, method: "x", params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: 1 } } } },
  "not an object",
  null,
];

describe("core's jsonRpcMessage with the SDK's schema (as the stdio transports read lines)", () => {
  it("accepts and refuses exactly what SDK v2's JSONRPCMessageSchema does", () => {
    for (const message of messages) {
      const parsed = JSONRPCMessageSchema.safeParse(message);
      expect(jsonRpcMessage(message, JSONRPCMessageSchema), JSON.stringify(message)).toEqual(parsed.success ? parsed.data : undefined);
    }
  });
});
