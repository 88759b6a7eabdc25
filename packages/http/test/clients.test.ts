import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, bearer, raw, serve, type Served } from "./helpers";

const textOf = (result: unknown) => ((result as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

async function streamable(s: Served, token: string, path = "/mcp"): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}${path}`), { requestInit: { headers: bearer(token) } });
  await client.connect(transport);
  return { client, transport };
}

/** Lists, searches, calls and runs code: what every client must be able to do. */
async function exercise(client: Client): Promise<void> {
  const tools = await client.listTools();
  expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["search_tools", "execute_code", "call_tool", "read_result"]));
  expect(textOf(await client.callTool({ name: "search_tools", arguments: { query: "echo text" } }))).toContain("m__echo");
  expect(textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "over http" } } }))).toBe("over http");
  const run = await client.callTool({
    name: "execute_code",
    arguments: { code: 'import { echo } from "mcp/servers/m/echo";\nexport default (await echo({ text: "a" })) + (await echo({ text: "b" }));' },
  });
  expect(JSON.parse(textOf(run))).toMatchObject({ result: "ab", toolCalls: 2 });
}

/** A call's first progress notification, as a promise: the server is running the call once it arrives. */
function firstProgress(): { running: Promise<void>; onprogress: () => void } {
  let onprogress: () => void = () => undefined;
  const running = new Promise<void>((resolve) => {
    onprogress = resolve;
  });
  return { running, onprogress: () => onprogress() };
}

describe("MCP clients over HTTP", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("the SDK's Streamable HTTP client connects, lists, calls and runs code", async () => {
    const { client, transport } = await streamable(s, TOKENS.alice);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    await exercise(client);
    await transport.terminateSession();
    await client.close();
  });

  it("a result a session kept is read only there; over REST its principal is told whose it is and where to read it, another principal is not", async () => {
    const { client } = await streamable(s, TOKENS.alice);
    const big = textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__huge", args: { bytes: 100_000, lines: true } } }));
    const handle = /"(res_[0-9a-f]{12})"/.exec(big)?.[1];
    expect(handle).toBeDefined();
    const alices = await raw(`${s.url}/v1/results/${handle}`, { headers: bearer(TOKENS.alice) });
    expect(alices.status).toBe(404);
    expect(alices.body).toContain(
      `is yours, but another of your sessions kept it (the MCP session that called m__huge), and a kept result is read only by the session that kept it: read it there with read_result`,
    );
    const bobs = await raw(`${s.url}/v1/results/${handle}`, { headers: bearer(TOKENS.bob) });
    expect(bobs.status).toBe(404);
    expect(bobs.body).toContain("it expired or never existed");
    expect(bobs.body).not.toContain("m__huge");
    await client.close();
  });

  it("the SDK's legacy SSE client connects, lists, calls and runs code", async () => {
    const client = new Client({ name: "legacy", version: "1.0.0" });
    const transport = new SSEClientTransport(new URL(`${s.url}/sse`), {
      requestInit: { headers: bearer(TOKENS.bob) },
      eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...bearer(TOKENS.bob) } }) },
    });
    await client.connect(transport);
    await exercise(client);
    await client.close();
  });

  it("the legacy SSE client works with ?apikey= alone (the message endpoint carries it)", async () => {
    const client = new Client({ name: "legacy-query", version: "1.0.0" });
    await client.connect(new SSEClientTransport(new URL(`${s.url}/sse?apikey=${TOKENS.alice}`)));
    expect(textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "q" } } }))).toBe("q");
    await client.close();
    expect(s.logs.map((l) => JSON.stringify(l)).join("\n")).not.toContain(TOKENS.alice);
  });

  it("two clients at once get their own sessions and their own answers", async () => {
    const [a, b] = await Promise.all([streamable(s, TOKENS.alice), streamable(s, TOKENS.bob)]);
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    const calls = (c: Client, tag: string) =>
      Promise.all(
        Array.from({ length: 10 }, (_, i) => c.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `${tag}${i}` } } }).then(textOf)),
      );
    const [fromA, fromB] = await Promise.all([calls(a.client, "a"), calls(b.client, "b")]);
    expect(fromA).toEqual(Array.from({ length: 10 }, (_, i) => `a${i}`));
    expect(fromB).toEqual(Array.from({ length: 10 }, (_, i) => `b${i}`));
    await Promise.all([a.client.close(), b.client.close()]);
  });

  it("progress reaches the session that asked, and a cancelled call is cancelled downstream", async () => {
    const { client } = await streamable(s, TOKENS.alice);
    const progress: number[] = [];
    const result = await client.callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 300, steps: 3 } } }, CallToolResultSchema, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(textOf(result)).toBe("slept 300 ms");
    // The last notification may race the answer on the request's stream; the ones before it must arrive, in order.
    expect(progress.slice(0, 2)).toEqual([1, 2]);
    const controller = new AbortController();
    // A long call whose first progress (after 100 ms) says the server is running it: the abort must reach a running call.
    const { running, onprogress } = firstProgress();
    const hanging = client.callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 600_000, steps: 6_000 } } }, CallToolResultSchema, {
      signal: controller.signal,
      onprogress,
    });
    await running;
    controller.abort();
    await expect(hanging).rejects.toThrow();
    let report: { count: number } = { count: 0 };
    for (let i = 0; i < 50 && report.count === 0; i++) {
      report = JSON.parse(textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__cancellations", args: {} } })));
      if (report.count === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(report.count).toBeGreaterThan(0);
    await client.close();
  });

  it("a second GET stream on one session is refused with 409", async () => {
    // The SDK client opens the standalone GET stream after initialize: its answer says it is there.
    let streamOpen!: () => void;
    const opened = new Promise<void>((resolve) => (streamOpen = resolve));
    const client = new Client({ name: "test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
      requestInit: { headers: bearer(TOKENS.alice) },
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if ((init?.method ?? "GET") === "GET" && response.ok) streamOpen();
        return response;
      },
    });
    await client.connect(transport);
    await opened;
    const second = await raw(`${s.url}/mcp`, {
      headers: { ...bearer(TOKENS.alice), accept: "text/event-stream", "mcp-session-id": transport.sessionId as string, "mcp-protocol-version": "2025-06-18" },
    });
    expect(second.status).toBe(409);
    expect(textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "still" } } }))).toBe("still");
    await client.close();
  });
});

describe("session lifetime", () => {
  it("ending a session (DELETE) cancels its calls in flight downstream", async () => {
    const s = await serve();
    try {
      const { client, transport } = await streamable(s, TOKENS.alice);
      const { running, onprogress } = firstProgress();
      const hanging = client
        .callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 600_000, steps: 6_000 } } }, undefined, { onprogress })
        .catch(() => "ended");
      await running;
      await transport.terminateSession();
      await client.close();
      await hanging;
      const other = await streamable(s, TOKENS.bob);
      let report: { count: number } = { count: 0 };
      for (let i = 0; i < 100 && report.count === 0; i++) {
        report = JSON.parse(textOf(await other.client.callTool({ name: "call_tool", arguments: { name: "m__cancellations", args: {} } })));
        if (report.count === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(report.count).toBe(1);
      await other.client.close();
    } finally {
      await s.close();
    }
  });

  it("an idle session expires and then answers 404, so the client re-initializes; open SSE streams get keep-alive comments", async () => {
    const s = await serve({ sessionIdleMs: 200, keepAliveMs: 100 });
    try {
      const init = await raw(`${s.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...bearer(TOKENS.alice) },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        }),
      });
      const id = init.headers["mcp-session-id"] as string;
      const list = () =>
        raw(`${s.url}/mcp`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": id,
            "mcp-protocol-version": "2025-06-18",
            ...bearer(TOKENS.alice),
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
        });
      expect((await list()).status).toBe(200);
      // No request for longer than the idle time: the sweep closes it (asking again would count as use).
      for (let i = 0; i < 100 && s.http.sessions.size > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(s.http.sessions.size).toBe(0);
      expect((await list()).status).toBe(404);

      const controller = new AbortController();
      const stream = await fetch(`${s.url}/sse`, { headers: bearer(TOKENS.alice), signal: controller.signal });
      const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes(": keep-alive")) seen += new TextDecoder().decode((await reader.read()).value);
      expect(seen).toContain("event: endpoint");
      controller.abort();
    } finally {
      await s.close();
    }
  });
});

describe("stateless", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ stateless: true });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("serves each POST on a fresh transport, answers GET with 405 Allow: POST, and keeps handles per principal", async () => {
    const { client } = await streamable(s, TOKENS.alice);
    await exercise(client);
    const get = await raw(`${s.url}/mcp`, { headers: { ...bearer(TOKENS.alice), accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
    const big = textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__huge", args: { bytes: 100_000, lines: true } } }));
    const handle = /"(res_[0-9a-f]{12})"/.exec(big)?.[1];
    expect(handle).toBeDefined();
    // Another request, another transport: the principal's handle is still theirs.
    expect(textOf(await client.callTool({ name: "read_result", arguments: { handle, op: "head", lines: 1 } }))).toContain("line 1:");
    expect((await raw(`${s.url}/v1/results/${handle}`, { headers: bearer(TOKENS.bob) })).status).toBe(404);
    await client.close();
  });
});
