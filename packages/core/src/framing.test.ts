import { describe, expect, it } from "vitest";
import { isProgressToken, jsonRpcMessage, withoutServerInfo, type MessageSchema } from "./framing";

/** A schema that refuses everything, so what passes is what jsonRpcMessage recognizes without one. */
const refusing: MessageSchema<unknown> = { safeParse: () => ({ success: false }) };

describe("jsonRpcMessage", () => {
  it("recognizes the common shapes as they are, without the schema", () => {
    const request = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "a", arguments: {}, _meta: { progressToken: "p" } } };
    const notification = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } };
    const result = { jsonrpc: "2.0", id: "x", result: { content: [] } };
    // As a 2026-era server stamps every answer.
    const stamped = {
      jsonrpc: "2.0",
      id: 2,
      result: { content: [], resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" } } },
    };
    for (const message of [request, notification, result, stamped]) expect(jsonRpcMessage(message, refusing)).toBe(message);
  });

  it("leaves every other shape to the protocol's schema", () => {
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
      { jsonrpc: "2.0", id: 1, result: { _meta: { "io.modelcontextprotocol/serverInfo": { name: "s" } } } },
      { jsonrpc: "2.0", id: 1, result: { _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1", title: "t" } } } },
      { jsonrpc: "2.0", id: 1, result: { _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" }, other: 1 } } },
      { jsonrpc: "2.0", id: 1, result: { _meta: JSON.parse('{"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}, "__proto__": {}}') } },
      { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "bad" } },
    ];
    for (const message of odd) expect(jsonRpcMessage(message, refusing)).toBeUndefined();
    const seen: unknown[] = [];
    const accepting: MessageSchema<string> = { safeParse: (value) => (seen.push(value), { success: true, data: "parsed" }) };
    expect(odd.map((message) => jsonRpcMessage(message, accepting))).toEqual(odd.map(() => "parsed"));
    expect(seen).toEqual(odd);
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

describe("withoutServerInfo", () => {
  const info = { "io.modelcontextprotocol/serverInfo": { name: "downstream", version: "2.0.0" } };

  it("drops the name a 2026-era server stamped, keeping every other _meta key, and _meta itself when nothing else is left", () => {
    const content = [{ type: "text", text: "hi" }];
    expect(withoutServerInfo({ content, _meta: { ...info, "vendor/trace": "abc" } })).toEqual({ content, _meta: { "vendor/trace": "abc" } });
    expect(withoutServerInfo({ content, _meta: info })).toEqual({ content });
  });

  it("returns the same object when there is nothing to drop", () => {
    const plain = { content: [], _meta: { "codemux/bytes": 2 } };
    expect(withoutServerInfo(plain)).toBe(plain);
    const none = { messages: [] };
    expect(withoutServerInfo(none)).toBe(none);
  });
});
