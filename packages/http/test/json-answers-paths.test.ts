import { askingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { INIT, MCP_HEADERS, TOKENS, bearer, misbehaving, raw, serve, textOf, type Served } from "./helpers";

/**
 * `CODEMUX_JSON_ANSWERS` (read when a session opens): on, a POST's one request is answered without
 * the SDK's SSE stream; off, every POST goes through the SDK's transport and the bridge reads its
 * stream back. Both paths give a client the same answers, errors, progress and questions.
 */
let s: Served;
beforeAll(async () => {
  s = await serve({}, { m: misbehaving(), a: { command: process.execPath, args: [askingServerPath] } });
});
afterAll(async () => {
  await s?.close();
});
afterEach(() => {
  delete process.env.CODEMUX_JSON_ANSWERS;
  delete process.env.CODEMUX_SERVER_LANE;
});

/** A raw session opened with the JSON-answer switch `on` or off (and the server lane `lane`): its headers for later POSTs. */
async function open(on: boolean, lane = true): Promise<Record<string, string>> {
  process.env.CODEMUX_JSON_ANSWERS = on ? "1" : "0";
  process.env.CODEMUX_SERVER_LANE = lane ? "1" : "0";
  const init = await raw(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice) }, body: INIT });
  expect(init.status).toBe(200);
  const headers = { ...MCP_HEADERS, ...bearer(TOKENS.alice), "mcp-session-id": String(init.headers["mcp-session-id"]), "mcp-protocol-version": "2025-06-18" };
  await raw(`${s.url}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
  return headers;
}

const callTool = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "call_tool", arguments: { name, args } },
});

/** Drops what differs from call to call whatever the path: the time a call took and when it was processed. */
const untimed = (key: string, value: unknown) => (key === "codemux/durationMs" || key === "codemux/processedAt" ? "-" : value);

/** What a client sees of each POST: status, content type, and the JSON-RPC messages (SSE events' data, or the body). */
async function observe(on: boolean, lane = true): Promise<unknown[]> {
  const headers = await open(on, lane);
  const posts: Array<{ headers?: Record<string, string>; body: unknown }> = [
    { body: { jsonrpc: "2.0", id: 1, method: "ping" } },
    { body: { jsonrpc: "2.0", id: 2, method: "tools/list" } },
    { body: callTool(3, "m__echo", { text: "plain" }) },
    { body: callTool(4, "m__fail", { message: "it failed" }) },
    { body: callTool(5, "m__throw", { message: "it threw" }) },
    { body: callTool(6, "m__nope", {}) },
    { body: { jsonrpc: "2.0", id: 7, method: "no/such/method" } },
    { body: { jsonrpc: "2.0", id: 8, method: "tools/call", params: "not an object" } },
    { body: [{ jsonrpc: "2.0", id: 9, method: "ping" }] },
    { headers: { ...headers, "mcp-protocol-version": "1999-01-01" }, body: { jsonrpc: "2.0", id: 10, method: "ping" } },
    { headers: { ...headers, accept: "application/json" }, body: { jsonrpc: "2.0", id: 11, method: "ping" } },
    { headers: { ...headers, "mcp-session-id": "no-such-session" }, body: { jsonrpc: "2.0", id: 12, method: "ping" } },
    {
      body: {
        ...callTool(13, "m__slow", { ms: 20, steps: 2 }),
        params: { name: "call_tool", arguments: { name: "m__slow", args: { ms: 20, steps: 2 } }, _meta: { progressToken: "p" } },
      },
    },
    { body: callTool(14, "m__huge", { bytes: 20_000 }) },
  ];
  const seen: unknown[] = [];
  for (const post of posts) {
    const res = await raw(`${s.url}/mcp`, { method: "POST", headers: post.headers ?? headers, body: JSON.stringify(post.body) });
    const type = String(res.headers["content-type"]);
    const messages = type.startsWith("text/event-stream")
      ? res.body
          .split("\n")
          .filter((line) => line.startsWith("data: ") && line.length > 6)
          .map((line) => JSON.parse(line.slice(6)))
      : res.body
        ? JSON.parse(res.body)
        : null;
    seen.push({ status: res.status, type, messages: JSON.parse(JSON.stringify(messages), untimed) });
  }
  lanes.push(s.http.sessions.all().find((one) => one.id === headers["mcp-session-id"])?.lane?.calls);
  return seen;
}

/** The server lane's call count of each session `observe` opened (undefined: the session has no lane). */
const lanes: Array<number | undefined> = [];

describe("answers without the SDK's SSE stream (CODEMUX_JSON_ANSWERS)", () => {
  it("give the same statuses, content types, answers and errors as the SDK's path", async () => {
    const on = await observe(true);
    const off = await observe(false);
    expect(on).toEqual(off);
    // The one-request answers are plain JSON, the progress call an SSE stream, on both paths.
    expect(on[2]).toMatchObject({ status: 200, type: "application/json", messages: { id: 3, result: { content: [{ text: "plain" }] } } });
    // Every progress notification the server sent, in order, then the answer, whichever path the pool's call took (CODEMUX_CALL_LANE).
    const progressed = on[12] as { type: string; messages: Array<{ method?: string; id?: number; params?: { progress?: number } }> };
    expect(progressed.type).toBe("text/event-stream");
    expect(progressed.messages.map((m) => m.method ?? `answer ${m.id}`)).toEqual(["notifications/progress", "notifications/progress", "answer 13"]);
    expect(progressed.messages.slice(0, 2).map((m) => m.params?.progress)).toEqual([1, 2]);
  });

  it.each([true, false])("keep progress and questions working for an SDK client (switch on: %s)", async (on) => {
    process.env.CODEMUX_JSON_ANSWERS = on ? "1" : "0";
    const client = new Client({ name: "legacy", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { answer: "yes" } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(TOKENS.bob) } }));
    try {
      const progress: number[] = [];
      const slow = (await client.callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 20, steps: 3 } } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      })) as CallToolResult;
      expect(textOf(slow)).toBe("slept 20 ms");
      // Every one the server sent, in order, before the answer, whichever path the pool's call took (CODEMUX_CALL_LANE).
      expect(progress).toEqual([1, 2, 3]);
      const asking = (await client.callTool({ name: "call_tool", arguments: { name: "a__ask", args: { message: "sure?" } } })) as CallToolResult;
      expect(asked).toEqual(["sure?"]);
      expect(textOf(asking)).toContain("yes");
      expect(textOf((await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "hi" } } })) as CallToolResult)).toBe("hi");
    } finally {
      await client.close();
    }
  });
});

describe("a JSON answer on the wire", () => {
  it("leaves as one piece, head and body together (no copy of the body into a Buffer), its length counted in bytes", async () => {
    const headers = await open(true);
    // What server-side sockets (they have a `server`) are handed to write for the one POST, empty pieces left out
    // (Node's `end` adds one); the test's own client is skipped.
    const pieces: number[] = [];
    type Chunk = { chunk: unknown };
    const size = (chunk: unknown) => (typeof chunk === "string" ? chunk.length : (chunk as Uint8Array).byteLength);
    const proto = Socket.prototype as unknown as { _write: (...a: unknown[]) => unknown; _writev: (...a: unknown[]) => unknown };
    const { _write, _writev } = proto;
    proto._write = function (this: Socket & { server?: unknown }, ...args: unknown[]) {
      if (this.server && size(args[0]) > 0) pieces.push(1);
      return _write.apply(this, args);
    };
    proto._writev = function (this: Socket & { server?: unknown }, ...args: unknown[]) {
      if (this.server) pieces.push((args[0] as Chunk[]).filter((c) => size(c.chunk) > 0).length);
      return _writev.apply(this, args);
    };
    const text = `é✓ ${"x".repeat(20_000)} 🙂`;
    try {
      const res = await raw(`${s.url}/mcp`, { method: "POST", headers, body: JSON.stringify(callTool(1, "m__echo", { text })) });
      expect(res.headers["content-type"]).toBe("application/json");
      expect(Number(res.headers["content-length"])).toBe(Buffer.byteLength(res.body));
      expect(JSON.parse(res.body).result.content[0].text).toBe(text);
    } finally {
      proto._write = _write;
      proto._writev = _writev;
    }
    expect(pieces).toEqual([1]);
  });
});

describe("the server lane on HTTP sessions (CODEMUX_SERVER_LANE)", () => {
  it.each([true, false])("answers every POST as the SDK's server does (JSON answers on: %s)", async (json) => {
    lanes.length = 0;
    const on = await observe(json, true);
    const off = await observe(json, false);
    expect(on).toEqual(off);
    // The plain tools/call requests (ids 3-6, 13, 14) took the lane; the one with params that are no object did not.
    expect(lanes).toEqual([6, undefined]);
  });

  it.each([true, false])("takes a legacy SSE session's calls, with the same answers (lane on: %s)", async (lane) => {
    process.env.CODEMUX_SERVER_LANE = lane ? "1" : "0";
    const client = new Client({ name: "sse", version: "1.0.0" });
    await client.connect(
      new SSEClientTransport(new URL(`${s.url}/sse`), {
        requestInit: { headers: bearer(TOKENS.bob) },
        eventSourceInit: {
          fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...bearer(TOKENS.bob) } }),
        },
      }),
    );
    try {
      const result = (await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "over sse" } } })) as CallToolResult;
      expect(textOf(result)).toBe("over sse");
      const session = s.http.sessions.all().find((one) => one.kind === "sse" && one.principal.endsWith("bob"));
      expect(session?.lane?.calls).toBe(lane ? 1 : undefined);
    } finally {
      await client.close();
    }
  });
});
