import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { StdioServerTransport } from "../src/stdio-transport";

/** Feeds lines to the transport and collects what reaches the session and what is answered on stdout. */
async function feed(lines: string[]): Promise<{ received: JSONRPCMessage[]; answers: Array<{ id: unknown; error?: { code: number } }> }> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new StdioServerTransport(stdin, stdout);
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => received.push(message);
  await transport.start();
  const out: string[] = [];
  stdout.on("data", (chunk: Buffer) => out.push(chunk.toString()));
  stdin.write(lines.map((line) => `${line}\n`).join(""));
  await new Promise((resolve) => setImmediate(resolve));
  await transport.close();
  const answers = out
    .join("")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: unknown; error?: { code: number } });
  return { received, answers };
}

describe("the stdio server transport's message check (a fast path for common shapes, the SDK's schema for the rest)", () => {
  it("passes requests, notifications and results, with or without _meta", async () => {
    const { received, answers } = await feed([
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "call_tool", arguments: { name: "m__echo" } } }),
      JSON.stringify({ jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "x", _meta: { progressToken: 7 } } }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      JSON.stringify({ jsonrpc: "2.0", id: 2, result: { roots: [] } }),
      JSON.stringify({ jsonrpc: "2.0", id: 3, error: { code: -1, message: "no" } }),
      // SDK v2's schema takes any _meta on a result (v1 refused a progress token that is not a string or number there).
      JSON.stringify({ jsonrpc: "2.0", id: 7, result: { _meta: { progressToken: {} } } }),
    ]);
    expect(received.map((m) => ("method" in m ? m.method : "id" in m ? m.id : undefined))).toEqual([
      "tools/call",
      "tools/call",
      "notifications/initialized",
      2,
      3,
      7,
    ]);
    expect(answers).toEqual([]);
  });

  it("refuses what the SDK's schema refuses: extra keys, a null or fractional id, a wrong version, a bad _meta", async () => {
    const { received, answers } = await feed([
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", extra: true }),
      JSON.stringify({ jsonrpc: "2.0", id: null, method: "ping" }),
      JSON.stringify({ jsonrpc: "2.0", id: 1.5, method: "ping" }),
      JSON.stringify({ jsonrpc: "1.0", id: 4, method: "ping" }),
      JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping", params: { _meta: { progressToken: true } } }),
      JSON.stringify({ jsonrpc: "2.0", id: 6, method: "ping", params: [1] }),
      "{not json",
    ]);
    expect(received).toEqual([]);
    expect(answers.map((a) => [a.id, a.error?.code])).toEqual([
      [1, -32600],
      [null, -32600],
      [1.5, -32600],
      [4, -32600],
      [5, -32600],
      [6, -32600],
      [null, -32700],
    ]);
  });

  it("passes a request whose _meta holds a progress token as it was sent, without the schema's rewrite", async () => {
    const sent = { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "x", _meta: { client: "k", progressToken: "p" }, arguments: { a: 1 } } };
    const { received } = await feed([JSON.stringify(sent)]);
    expect(received).toEqual([sent]);
    // The SDK's schema would have put progressToken first.
    expect(Object.keys((received[0] as { params: { _meta: object } }).params._meta)).toEqual(["client", "progressToken"]);
  });

  it("still refuses, through the SDK's schema, a _meta the schema refuses", async () => {
    const { received, answers } = await feed([
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", _meta: { progressToken: 1.5 } } }),
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", _meta: { "io.modelcontextprotocol/related-task": { taskId: 5 } } } }),
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "x", _meta: { progressToken: 1 } }, extra: 1 }),
      JSON.stringify({ jsonrpc: "2.0", id: 2 ** 60, method: "tools/call", params: { name: "x", _meta: { progressToken: 1 } } }),
    ]);
    expect(received).toEqual([]);
    expect(answers.map((a) => a.error?.code)).toEqual([-32600, -32600, -32600, -32600]);
  });
});
