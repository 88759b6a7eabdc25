import { Codemux } from "@codemux/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { TOKENS, bearer, config, misbehaving, raw, serve, type RawResponse, type Served } from "./helpers";

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/** An initialize request as `token`'s principal: the new session's id, or the refusal. */
async function initialize(s: Served, token: string): Promise<{ id: string | undefined; res: RawResponse }> {
  const res = await raw(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...bearer(token) }, body: INIT });
  return { id: res.status === 200 ? (res.headers["mcp-session-id"] as string) : undefined, res };
}

const sessionHeaders = (token: string, id: string) => ({ ...MCP_HEADERS, ...bearer(token), "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" });

/** Reads a stream to its end: resolves when the server closes it. */
async function untilEnded(response: Response): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = "";
  for (;;) {
    const read = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (read.done) return text;
    text += new TextDecoder().decode(read.value);
  }
}

describe("reserved principals", () => {
  let core: Codemux;
  beforeAll(() => {
    core = new Codemux({ config: config({ m: misbehaving() }) });
  });
  afterAll(async () => {
    await core.close();
  });

  it("refuses a token named after the stdio owner or the no-auth caller, in any case, with a sentence that says what to do", () => {
    for (const name of ["local", "Local", "LOCAL", "anonymous", "Anonymous"]) {
      expect(() => new CodemuxHttpServer(core, { port: 0, tokens: [{ name, token: "a-long-enough-token-0123" }] })).toThrow(
        `Token name "${name}" is reserved: "local" is the owner's own principal over stdio and "anonymous" is every caller without a token; name the token after its holder (e.g. laptop:TOKEN).`,
      );
    }
  });
});

describe("secrets in the access log", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("masks a query token whose parameter name is percent-encoded, as authentication decodes it", async () => {
    for (const name of ["api%6Bey", "%61%70%69%6b%65%79", "apikey"]) {
      const res = await raw(`${s.url}/v1/tools?${name}=${TOKENS.alice}&limit=1`);
      expect(res.status).toBe(200);
      const line = s.logs.find((l) => l.msg === "request" && l.requestId === res.headers["x-request-id"]);
      expect(line).toMatchObject({ principal: "alice", path: "/v1/tools?apikey=***&limit=1" });
    }
    expect(JSON.stringify(s.logs)).not.toContain(TOKENS.alice);
  });
});

describe("no principal takes every session slot", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ maxSessions: 8, principalLimits: { bob: { sessions: 3 } } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("refuses a principal past a quarter of the slots (at least 2) with 429 naming the limit and its value, while others still get theirs", async () => {
    const first = await initialize(s, TOKENS.alice);
    const second = await initialize(s, TOKENS.alice);
    expect([first.res.status, second.res.status]).toEqual([200, 200]);
    const third = await initialize(s, TOKENS.alice);
    expect(third.res.status).toBe(429);
    expect(third.res.headers["retry-after"]).toBe("5");
    expect(JSON.parse(third.res.body).error).toEqual({
      code: -32000,
      message:
        'Principal "alice" already holds 2 MCP sessions, its limit (sessions per principal: 2); close one of its idle clients (DELETE /mcp ends a session) or raise http.limits.perPrincipal.sessions in the config.',
    });
    // The legacy SSE transport counts against the same share.
    const sse = await raw(`${s.url}/sse`, { headers: bearer(TOKENS.alice) });
    expect(sse.status).toBe(429);
    expect(JSON.parse(sse.body).error.message).toContain("sessions per principal: 2");

    // bob's own limit (3) overrides the default share; his sessions never count against alice's.
    const bobs = [await initialize(s, TOKENS.bob), await initialize(s, TOKENS.bob), await initialize(s, TOKENS.bob)];
    expect(bobs.map((b) => b.res.status)).toEqual([200, 200, 200]);
    const fourth = await initialize(s, TOKENS.bob);
    expect(fourth.res.status).toBe(429);
    expect(JSON.parse(fourth.res.body).error.message).toContain('Principal "bob" already holds 3 MCP sessions, its limit (sessions per principal: 3)');

    // Ending a session gives its place back to its principal.
    expect((await raw(`${s.url}/mcp`, { method: "DELETE", headers: sessionHeaders(TOKENS.alice, first.id as string) })).status).toBe(200);
    expect((await initialize(s, TOKENS.alice)).res.status).toBe(200);
    expect(s.http.metrics.render()).toMatch(/codemux_sessions_rejected_total\{limit="sessionsPerPrincipal"\} 3/);
  });
});

describe("streams expire when idle", () => {
  it("closes an idle session whose GET stream is open, and a legacy SSE stream with no messages, and frees their places", async () => {
    const s = await serve({ sessionIdleMs: 300, maxSessions: 8 });
    try {
      const { id } = await initialize(s, TOKENS.alice);
      const headers = sessionHeaders(TOKENS.alice, id as string);
      const stream = await fetch(`${s.url}/mcp`, { headers: { ...headers, accept: "text/event-stream" } });
      expect(stream.status).toBe(200);
      const legacy = await fetch(`${s.url}/sse`, { headers: bearer(TOKENS.alice) });
      expect(legacy.status).toBe(200);
      // Nothing is asked on either: the server ends both streams once the session is idle.
      await untilEnded(stream);
      expect(await untilEnded(legacy)).toContain("event: endpoint");
      const after = await raw(`${s.url}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) });
      expect(after.status).toBe(404);
      expect(s.http.sessions.held("alice")).toBe(0);
    } finally {
      await s.close();
    }
  });
});
