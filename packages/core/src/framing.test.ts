import { describe, expect, it } from "vitest";
import { isProgressToken, plainJsonRpcMessage } from "./framing";

describe("plainJsonRpcMessage", () => {
  it("recognizes the common shapes as they are", () => {
    const request = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "a", arguments: {}, _meta: { progressToken: "p" } } };
    const notification = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } };
    const result = { jsonrpc: "2.0", id: "x", result: { content: [] } };
    for (const message of [request, notification, result]) expect(plainJsonRpcMessage(message)).toBe(message);
  });

  it("leaves every other shape to the protocol's schema (undefined)", () => {
    const odd = [
      null,
      [],
      { jsonrpc: "1.0", id: 1, method: "m" },
      { jsonrpc: "2.0", id: 1, method: "m", extra: true },
      { jsonrpc: "2.0", id: 1.5, method: "m" },
      { jsonrpc: "2.0", id: 1, method: "m", params: { _meta: { progressToken: 1.5 } } },
      { jsonrpc: "2.0", id: 1, method: "m", params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } } } },
      { jsonrpc: "2.0", id: 1, method: "m", params: { _meta: JSON.parse('{"__proto__": {"x": 1}}') } },
      { jsonrpc: "2.0", id: 1, result: { _meta: {} } },
      { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "bad" } },
    ];
    for (const message of odd) expect(plainJsonRpcMessage(message)).toBeUndefined();
  });

  it("takes strings and exactly held integers as progress tokens", () => {
    expect([isProgressToken("a"), isProgressToken(3), isProgressToken(2 ** 60), isProgressToken(1.5), isProgressToken(null)]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});
