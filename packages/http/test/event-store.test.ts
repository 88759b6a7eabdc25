import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { Server as McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { bridgeRequest } from "../src/bridge";
import { discardJsonEventsByDefault } from "../src/event-store";
import { BoundedEventStore } from "../src/event-store";

const note = (n: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: n } });

describe("BoundedEventStore", () => {
  it("replays the events of one stream after the given id, and forgets the oldest past its bounds", async () => {
    const store = new BoundedEventStore({ maxEvents: 3 });
    const a1 = await store.storeEvent("a", note(1));
    await store.storeEvent("b", note(2));
    await store.storeEvent("a", note(3));
    const sent: unknown[] = [];
    expect(await store.replayEventsAfter(a1, { send: async (_id, m) => void sent.push(m) })).toBe("a");
    expect(sent).toEqual([note(3)]);
    await store.storeEvent("a", note(4));
    expect(store.size).toBe(3);
    expect(await store.getStreamIdForEventId(a1)).toBeUndefined();
    const bytes = new BoundedEventStore({ maxBytes: 2000 });
    for (let i = 0; i < 100; i++) await bytes.storeEvent("s", note(i));
    expect(bytes.size).toBeLessThan(100);
  });
});

describe("answers sent as plain JSON leave no resumable event (CODEMUX_JSON_EVENTS)", () => {
  /** A real SDK v2 server and Streamable HTTP transport with a BoundedEventStore, served through the bridge; `discard` passes the store to it. */
  async function serveEcho(discard: boolean) {
    const store = new BoundedEventStore();
    const sdk = new McpServer({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } });
    sdk.setRequestHandler("tools/list", async () => ({ tools: [{ name: "echo", inputSchema: { type: "object" } }] }));
    sdk.setRequestHandler("tools/call", async (request) => ({ content: [{ type: "text", text: String(request.params.arguments?.text) }] }));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => "session-1", eventStore: store });
    await sdk.connect(transport);
    const http = createServer((req, res) => {
      let text = "";
      req.on("data", (d: Buffer) => {
        text += d;
      });
      req.on("end", () => void bridgeRequest(transport, { req, res, body: JSON.parse(text), ...(discard ? { events: store } : {}) }));
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const post = async (message: unknown, session?: string) => {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } : {}),
        },
        body: JSON.stringify(message),
      });
      return { type: res.headers.get("content-type"), session: res.headers.get("mcp-session-id") ?? undefined, text: await res.text() };
    };
    const close = async () => {
      await transport.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    };
    return { store, post, close };
  }

  async function exchange(discard: boolean) {
    const s = await serveEcho(discard);
    try {
      const init = await s.post({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      await s.post({ jsonrpc: "2.0", method: "notifications/initialized" }, init.session);
      const answers = [];
      for (let i = 0; i < 5; i++)
        answers.push(await s.post({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "echo", arguments: { text: `t${i}` } } }, init.session));
      await new Promise((r) => setImmediate(r));
      return { answers, kept: s.store.size };
    } finally {
      await s.close();
    }
  }

  it("discards the events of JSON answers; with the switch off every event is kept; the answers are the same", async () => {
    const on = await exchange(true);
    const off = await exchange(false);
    expect(on.answers.map((a) => a.type)).toEqual(Array(5).fill("application/json"));
    expect(on.answers).toEqual(off.answers);
    expect(JSON.parse(on.answers[4]?.text ?? "")).toMatchObject({ id: 5, result: { content: [{ text: "t4" }] } });
    expect(on.kept).toBe(0);
    expect(off.kept).toBeGreaterThanOrEqual(10);
  });

  it("discarding an event before it is settled costs no size, after it gives its bytes back, and an unknown id is nothing", async () => {
    const store = new BoundedEventStore({ maxEvents: 2 });
    const a = await store.storeEvent("a", note(1));
    expect(store.discard(a)).toBe(true);
    expect(store.discard(a)).toBe(false);
    const b = await store.storeEvent("a", note(2));
    expect(store.size).toBe(1);
    expect(store.discard(b)).toBe(true);
    expect(store.size).toBe(0);
    expect(store.discard("nope")).toBe(false);
  });

  it("CODEMUX_JSON_EVENTS=keep keeps them", () => {
    expect(discardJsonEventsByDefault({ CODEMUX_JSON_EVENTS: "keep" })).toBe(false);
    expect(discardJsonEventsByDefault({ CODEMUX_JSON_EVENTS: " KEEP " })).toBe(false);
    expect(discardJsonEventsByDefault({})).toBe(true);
  });
});
