import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { TOKENS, bearer, json, raw, serve, type Served } from "./helpers";

const SHUTTING_DOWN = "codemux is shutting down; retry against the next instance.";

/** Waits until `n` requests are being answered (open streams are not counted). */
async function inFlight(s: Served, n: number): Promise<void> {
  while (!s.http.metrics.render().includes(`codemux_http_requests_in_flight ${n}`)) await new Promise((r) => setTimeout(r, 20));
}

describe("shutdown past the grace", () => {
  it("answers a REST call with 503 and an MCP call on its open stream with a JSON-RPC error, and logs no internal error", async () => {
    const s = await serve({ shutdownGraceMs: 200 });
    const client = new Client({ name: "shutdown", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(TOKENS.bob) } }));
    let streaming!: () => void;
    const streamOpen = new Promise<void>((resolve) => (streaming = resolve));
    // Progress opens the call's SSE stream: its answer can no longer be an HTTP status.
    const mcp = client
      .callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 600_000, steps: 1000 } } }, undefined, {
        onprogress: () => streaming(),
        timeout: 120_000,
      })
      .then(
        () => "answered",
        (error: Error) => error.message,
      );
    const rest = fetch(`${s.url}/v1/tools/m__hang/call`, {
      method: "POST",
      headers: { ...bearer(TOKENS.alice), "content-type": "application/json" },
      body: "{}",
    });
    await streamOpen;
    await inFlight(s, 2);
    await s.http.close();
    const answer = await rest;
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("5");
    expect(await json(answer)).toEqual({ error: { code: "capacity", message: SHUTTING_DOWN } });
    expect(await mcp).toContain(SHUTTING_DOWN);
    await client.close().catch(() => undefined);
    await s.core.close();
    expect(s.logs.filter((l) => l.level === "error" && l.msg !== "request")).toEqual([]);
    expect(s.logs.find((l) => l.path === "/v1/tools/m__hang/call")).toMatchObject({ status: 503 });
  });

  it("answers a stateless MCP call still running with a 503 JSON-RPC error", async () => {
    const s = await serve({ shutdownGraceMs: 100, stateless: true });
    const call = raw(`${s.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...bearer(TOKENS.alice) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "call_tool", arguments: { name: "m__hang", args: {} } } }),
    });
    await inFlight(s, 1);
    await s.http.close();
    const answer = await call;
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({ jsonrpc: "2.0", error: { code: -32000, message: SHUTTING_DOWN }, id: null });
    await s.core.close();
    expect(s.logs.filter((l) => l.level === "error" && l.msg !== "request")).toEqual([]);
  });
});

describe("a call whose client goes away", () => {
  it("is cancelled downstream and logged as the client's doing (499), not as an internal error", async () => {
    const s = await serve();
    try {
      const counter = async () => {
        const answer = await fetch(`${s.url}/v1/tools/m__counter/call`, {
          method: "POST",
          headers: { ...bearer(TOKENS.bob), "content-type": "application/json" },
          body: "{}",
        });
        return ((await answer.json()) as { value: { calls: number } }).value.calls;
      };
      const before = await counter();
      expect(before).toBeGreaterThan(0);
      const controller = new AbortController();
      const call = fetch(`${s.url}/v1/tools/m__hang/call`, {
        method: "POST",
        headers: { ...bearer(TOKENS.alice), "content-type": "application/json" },
        body: "{}",
        signal: controller.signal,
      }).catch(() => "aborted");
      // The server must have the call before the client goes away: a call cancelled before it was sent has nothing to cancel downstream.
      for (let polls = 1; (await counter()) - before - polls < 1; polls++) await new Promise((r) => setTimeout(r, 25));
      controller.abort();
      expect(await call).toBe("aborted");
      let cancelled = 0;
      while (cancelled === 0) {
        const report = await fetch(`${s.url}/v1/tools/m__cancellations/call`, {
          method: "POST",
          headers: { ...bearer(TOKENS.bob), "content-type": "application/json" },
          body: "{}",
        });
        cancelled = ((await report.json()) as { value: { count: number } }).value.count;
        if (cancelled === 0) await new Promise((r) => setTimeout(r, 25));
      }
      expect(s.logs.find((l) => l.path === "/v1/tools/m__hang/call")).toMatchObject({ status: 499 });
      expect(s.logs.filter((l) => l.msg === "internal error")).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
