import { Codemux } from "@codemux/server";
import { until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { INIT, MCP_HEADERS, TOKENS, bearer, config, misbehaving, raw, serve, type RawResponse, type Served } from "./helpers";

/** An initialize request as `token`'s principal: the new session's id, or the refusal. */
async function initialize(s: Served, token: string): Promise<{ id: string | undefined; res: RawResponse }> {
  const res = await raw(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...bearer(token) }, body: INIT });
  return { id: res.status === 200 ? (res.headers["mcp-session-id"] as string) : undefined, res };
}

const sessionHeaders = (token: string, id: string) => ({ ...MCP_HEADERS, ...bearer(token), "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" });

/** A raw TCP connection from a chosen loopback address (Linux routes all of 127/8 to this host). */
interface Connection {
  socket: Socket;
  /** Everything received and not yet taken by `request`. */
  received: string;
  closed: Promise<void>;
  isClosed(): boolean;
}

async function connectFrom(s: Served, localAddress: string): Promise<Connection> {
  const socket = connect({ host: "127.0.0.1", port: s.http.port, localAddress });
  let isClosed = false;
  const conn: Connection = {
    socket,
    received: "",
    closed: new Promise((resolve) => socket.once("close", () => resolve())),
    isClosed: () => isClosed,
  };
  socket.on("data", (chunk: Buffer) => (conn.received += chunk.toString("latin1")));
  socket.on("error", () => undefined);
  socket.once("close", () => (isClosed = true));
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return conn;
}

/** Sends one GET on the connection and reads its whole answer (status line, headers, body). */
async function request(conn: Connection, path: string, headers: Record<string, string> = {}): Promise<{ status: number; head: string; body: string }> {
  const lines = Object.entries({ host: "127.0.0.1", ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
  conn.socket.write(`GET ${path} HTTP/1.1\r\n${lines.join("")}\r\n`);
  for (;;) {
    const end = conn.received.indexOf("\r\n\r\n");
    const length = Number(/content-length: (\d+)/i.exec(conn.received.slice(0, end))?.[1] ?? Number.NaN);
    if (end >= 0 && conn.received.length >= end + 4 + length) {
      const head = conn.received.slice(0, end);
      const body = conn.received.slice(end + 4, end + 4 + length);
      conn.received = conn.received.slice(end + 4 + length);
      return { status: Number(head.slice(9, 12)), head, body };
    }
    if (conn.isClosed()) throw new Error(`connection closed after: ${conn.received.slice(0, 200)}`);
    await new Promise((resolve) => conn.socket.once("data", resolve).once("close", resolve));
  }
}

/** Starts a request whose headers never end: a byte now and then, as a slowloris client sends. */
function trickle(conn: Connection): void {
  conn.socket.write("GET /v1/tools HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  const drip = setInterval(() => conn.socket.writable && conn.socket.write("X-Slow: 1\r\n"), 200);
  conn.socket.once("close", () => clearInterval(drip));
}

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
      expect(line).toMatchObject({ principal: "token:alice", path: "/v1/tools?apikey=***&limit=1" });
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

  it("lets a principal past its share take free places while no other principal waits, then takes an idle one back and binds the shares", async () => {
    // Alone, alice (share 2 of 8) takes all 8 places: shares are work-conserving.
    const alices = [];
    for (let i = 0; i < 8; i++) alices.push(await initialize(s, TOKENS.alice));
    expect(alices.map((a) => a.res.status)).toEqual(Array(8).fill(200));
    // With every place hers, one more is past her share and the table: refused.
    expect((await initialize(s, TOKENS.alice)).res.status).toBe(429);

    // bob (his own limit, 3) wants a place: the longest idle of alice's borrowed sessions goes for him.
    const bob = await initialize(s, TOKENS.bob);
    expect(bob.res.status).toBe(200);
    const reclaimed = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers: sessionHeaders(TOKENS.alice, alices[0]?.id as string),
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(reclaimed.status).toBe(404);

    // While bob waits for places, the shares bind: alice, past hers, is refused with 429 naming the limit and its value.
    const more = await initialize(s, TOKENS.alice);
    expect(more.res.status).toBe(429);
    expect(more.res.headers["retry-after"]).toBe("5");
    expect(JSON.parse(more.res.body).error).toEqual({
      code: -32000,
      message:
        'Principal "token:alice" already holds 7 MCP sessions, its limit (sessions per principal: 2); close one of its idle clients (DELETE /mcp ends a session) or raise http.limits.perPrincipal.sessions in the config.',
    });
    // The legacy SSE transport counts against the same share.
    const sse = await raw(`${s.url}/sse`, { headers: bearer(TOKENS.alice) });
    expect(sse.status).toBe(429);
    expect(JSON.parse(sse.body).error.message).toContain("sessions per principal: 2");

    // bob gets his whole share (3), taking alice's idle places; past it, with the table full, he is refused.
    const bobs = [await initialize(s, TOKENS.bob), await initialize(s, TOKENS.bob)];
    expect(bobs.map((b) => b.res.status)).toEqual([200, 200]);
    const fourth = await initialize(s, TOKENS.bob);
    expect(fourth.res.status).toBe(429);
    expect(JSON.parse(fourth.res.body).error.message).toContain('Principal "token:bob" already holds 3 MCP sessions, its limit (sessions per principal: 3)');
    expect(s.http.metrics.render()).toMatch(/codemux_sessions_rejected_total\{limit="sessionsPerPrincipal"\} 4/);
  });
});

describe("one principal alone, from one address, with the default limits", () => {
  it("serves 50 SDK clients' sessions and their parallel calls with no refusal", async () => {
    const s = await serve();
    const clients: Client[] = [];
    try {
      for (let i = 0; i < 50; i++) {
        const client = new Client({ name: `team-${i}`, version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
        clients.push(client);
      }
      const results = await Promise.all(
        clients.map((client, i) => client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `${i}` } } })),
      );
      expect(results.map((r) => (r.content as Array<{ text: string }>)[0]?.text)).toEqual(clients.map((_, i) => `${i}`));
      expect(s.http.sessions.held("token:alice")).toBe(50);
      const metrics = s.http.metrics.render();
      expect(metrics).not.toContain("codemux_sessions_rejected_total{");
      expect(metrics).not.toContain('codemux_connections_refused_total{reason="per_address"}');
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await s.close();
    }
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
      expect(s.http.sessions.held("token:alice")).toBe(0);
    } finally {
      await s.close();
    }
  });
});

/** What a connection past its address's limit is told. */
const refusalOf = (address: string, max: number, open = max) =>
  `Too many connections from ${address}: ${open} are open and none is idle (connections per address: ${max}). Retry shortly. If many clients share this address, raise http.limits.connectionsPerAddress in the config; behind a reverse proxy, start codemux with --trusted-proxy PROXY_ADDRESS so that each client counts on its own.`;

/** Starts a REST call of m__slow on the connection without waiting for its answer: the connection stays busy meanwhile. */
function startSlowCall(conn: Connection, headers: Record<string, string>): void {
  const body = JSON.stringify({ ms: 60_000 });
  const lines = Object.entries({ host: "127.0.0.1", "content-type": "application/json", "content-length": String(body.length), ...headers });
  conn.socket.write(`POST /v1/tools/m__slow/call HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`);
}

describe("connection exhaustion", () => {
  const slow = { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 };
  const open: Connection[] = [];
  /** Ends the test's connections first (their slow calls are cancelled with them), then the server. */
  const close = async (s: Served) => {
    for (const conn of open.splice(0)) conn.socket.destroy();
    await s.close();
  };
  const from = async (s: Served, address: string) => {
    const conn = await connectFrom(s, address);
    open.push(conn);
    return conn;
  };

  it("one address holding trickling connections cannot lock other addresses out: past its limit each is answered 429 and closed", async () => {
    const s = await serve({ ...slow, maxConnections: 12, maxConnectionsPerAddress: 4, authTimeoutMs: 60_000 });
    try {
      const attacker: Connection[] = [];
      for (let i = 0; i < 20; i++) {
        const conn = await from(s, "127.0.0.2");
        trickle(conn);
        attacker.push(conn);
      }
      const other = await from(s, "127.0.0.3");
      expect((await request(other, "/v1/tools", bearer(TOKENS.bob))).status).toBe(200);
      // Past the limit a few wait briefly for a health probe, the rest are refused at once: all are refused in the end.
      const refused = () => attacker.filter((conn) => conn.isClosed());
      while (refused().length < 16) await Promise.race(attacker.filter((conn) => !conn.isClosed()).map((conn) => conn.closed));
      for (const conn of refused()) {
        expect(conn.received).toContain("HTTP/1.1 429 Too Many Requests");
        expect(conn.received).toContain(refusalOf("127.0.0.2", 4));
      }
      expect(attacker.filter((conn) => !conn.isClosed()).length).toBe(4);
      expect(s.http.metrics.render()).toContain('codemux_connections_refused_total{reason="per_address"} 16');
    } finally {
      await close(s);
    }
  });

  it("closes an address's longest idle keep-alive connection to make room before refusing its new one", async () => {
    const s = await serve({ ...slow, maxConnectionsPerAddress: 2 });
    try {
      const first = await from(s, "127.0.0.7");
      expect((await request(first, "/v1/tools", bearer(TOKENS.alice))).status).toBe(200);
      const second = await from(s, "127.0.0.7");
      expect((await request(second, "/v1/tools", bearer(TOKENS.alice))).status).toBe(200);
      // Both are idle and kept alive; a third connection is served, and the one idle the longest is closed for it.
      const third = await from(s, "127.0.0.7");
      expect((await request(third, "/v1/tools", bearer(TOKENS.alice))).status).toBe(200);
      await first.closed;
      expect(second.isClosed()).toBe(false);
      expect((await request(second, "/v1/tools", bearer(TOKENS.alice))).status).toBe(200);
      expect(s.http.metrics.render()).toContain("codemux_connections_idle_closed_total 1");
      // A connection with a request in flight is never closed for another: with both busy, the next one is refused.
      startSlowCall(second, bearer(TOKENS.alice));
      startSlowCall(third, bearer(TOKENS.alice));
      await until(() => s.http.metrics.render().includes("codemux_http_requests_in_flight 2"));
      const fourth = await from(s, "127.0.0.7");
      const refused = await request(fourth, "/v1/tools", bearer(TOKENS.alice));
      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.body).error.message).toBe(refusalOf("127.0.0.7", 2));
      expect(second.isClosed() || third.isClosed()).toBe(false);
    } finally {
      await close(s);
    }
  });

  it("lets an address past its share borrow a free place while no other address needs it, takes it back for one that does, then stops lending", async () => {
    // The default share of 8 connections is 2: an address borrows while the 2 places of a share stay free for others.
    const s = await serve({ ...slow, maxConnections: 8 });
    try {
      expect(s.http.options.maxConnectionsPerAddress).toBe(2);
      const busy = [];
      for (let i = 0; i < 5; i++) {
        const conn = await from(s, "127.0.0.9");
        startSlowCall(conn, bearer(TOKENS.alice));
        busy.push(conn);
        await until(() => s.http.metrics.render().includes(`codemux_http_requests_in_flight ${i + 1}`));
      }
      // Its busy connections past its share of 2 and a sixth one are borrowed, and served.
      const borrowed = await from(s, "127.0.0.9");
      expect((await request(borrowed, "/v1/tools", bearer(TOKENS.alice))).status).toBe(200);
      // Another address within its share needs the room kept for others: the idle borrowed connection is closed for it.
      const other = await from(s, "127.0.0.10");
      expect((await request(other, "/v1/tools", bearer(TOKENS.bob))).status).toBe(200);
      await borrowed.closed;
      expect(s.http.metrics.render()).toContain("codemux_connections_idle_closed_total 1");
      other.socket.destroy();
      await other.closed;
      // From then on the share binds, although places are free again: its next connection is refused.
      const refused = await request(await from(s, "127.0.0.9"), "/v1/tools", bearer(TOKENS.alice));
      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.body).error.message).toBe(refusalOf("127.0.0.9", 2, 5));
      expect(busy.some((conn) => conn.isClosed())).toBe(false);
    } finally {
      await close(s);
    }
  });

  it("never refuses a health probe: with every connection of an address busy, /healthz and /readyz still answer on a new one", async () => {
    const s = await serve({ ...slow, maxConnectionsPerAddress: 2 });
    try {
      for (let i = 0; i < 2; i++) startSlowCall(await from(s, "127.0.0.8"), bearer(TOKENS.alice));
      await until(() => s.http.metrics.render().includes("codemux_http_requests_in_flight 2"));
      const health = await request(await from(s, "127.0.0.8"), "/healthz");
      expect(health.status).toBe(200);
      // Answered, then closed: a probe past the limit holds nothing.
      expect(health.head.toLowerCase()).toContain("connection: close");
      const probe = await from(s, "127.0.0.8");
      const ready = await request(probe, "/readyz");
      expect([ready.status, JSON.parse(ready.body)]).toEqual([200, { status: "ready" }]);
      await probe.closed;
      const detail = await request(await from(s, "127.0.0.8"), "/readyz", bearer(TOKENS.bob));
      expect(JSON.parse(detail.body)).toMatchObject({ status: "ready", servers: [{ name: "m" }] });
      expect((await request(await from(s, "127.0.0.8"), "/v1/tools", bearer(TOKENS.bob))).status).toBe(429);
    } finally {
      await close(s);
    }
  });

  it("fits a team behind one address by default: two SDK clients' 20 parallel calls each, with their idle pool, and /healthz meanwhile", async () => {
    const s = await serve();
    const clients: Client[] = [];
    try {
      for (const token of [TOKENS.alice, TOKENS.bob]) {
        const client = new Client({ name: "burst", version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(token) } }));
        clients.push(client);
      }
      for (let round = 0; round < 2; round++) {
        const calls = clients.flatMap((client) =>
          Array.from({ length: 20 }, () => client.callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 300 } } })),
        );
        const probes = Array.from({ length: 5 }, () => fetch(`${s.url}/healthz`).then((r) => r.status));
        const results = await Promise.all(calls);
        expect(results.filter((r) => r.isError)).toEqual([]);
        expect(await Promise.all(probes)).toEqual([200, 200, 200, 200, 200]);
      }
      expect(s.http.metrics.render()).not.toContain('codemux_connections_refused_total{reason="per_address"}');
      expect(s.http.options.maxConnectionsPerAddress).toBe(256);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await close(s);
    }
  });

  it("closes a connection that sends no authenticated request by the deadline, keeps an authenticated one, and closes after a 401", async () => {
    const s = await serve({ ...slow, authTimeoutMs: 300 });
    try {
      const authenticated = await from(s, "127.0.0.4");
      expect((await request(authenticated, "/v1/tools", bearer(TOKENS.alice))).status).toBe(200);
      const trickler = await from(s, "127.0.0.4");
      trickle(trickler);
      // Both had the same deadline, the authenticated one first: once the trickler is cut, the other would have been too.
      await trickler.closed;
      expect(authenticated.isClosed()).toBe(false);
      expect((await request(authenticated, "/v1/tools", bearer(TOKENS.alice))).status).toBe(200);
      expect(s.http.metrics.render()).toContain('codemux_connections_refused_total{reason="auth_timeout"} 1');

      const guesser = await from(s, "127.0.0.4");
      const denied = await request(guesser, "/v1/tools", bearer("not-a-valid-token"));
      expect(denied.status).toBe(401);
      expect(denied.head.toLowerCase()).toContain("connection: close");
      await guesser.closed;
    } finally {
      await close(s);
    }
  });

  it("reads the client address from X-Forwarded-For only when the peer is a trusted proxy, from its right end", async () => {
    const s = await serve({ ...slow, maxConnectionsPerAddress: 2, trustedProxies: ["127.0.0.1", "127.0.0.5/32"] });
    try {
      const forwarded = (client: string) => ({ ...bearer(TOKENS.alice), "x-forwarded-for": client });
      startSlowCall(await from(s, "127.0.0.1"), forwarded("198.51.100.7"));
      // A hop the client wrote itself (left of what the proxy appended) changes nothing; nor does a second trusted proxy.
      startSlowCall(await from(s, "127.0.0.1"), forwarded("203.0.113.1, 198.51.100.7, 127.0.0.5"));
      await until(() => s.http.metrics.render().includes("codemux_http_requests_in_flight 2"));
      const refused = await request(await from(s, "127.0.0.1"), "/v1/tools", forwarded("198.51.100.7"));
      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.body).error.message).toBe(refusalOf("198.51.100.7", 2));
      expect((await request(await from(s, "127.0.0.1"), "/v1/tools", forwarded("198.51.100.8"))).status).toBe(200);

      // From a peer that is not a trusted proxy the header is ignored: the peer's own address counts.
      startSlowCall(await from(s, "127.0.0.6"), { ...bearer(TOKENS.bob), "x-forwarded-for": "192.0.2.1" });
      await until(() => s.http.metrics.render().includes("codemux_http_requests_in_flight 3"));
      await from(s, "127.0.0.6");
      const third = await from(s, "127.0.0.6");
      await third.closed;
      expect(third.received).toContain(refusalOf("127.0.0.6", 2));
    } finally {
      await close(s);
    }
  });
});
