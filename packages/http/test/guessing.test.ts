import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INIT, MCP_HEADERS, TOKENS, bearer, raw, serve, type RawResponse, type Served } from "./helpers";

/**
 * Token guessing, from outside over real HTTP: wrong tokens on every route count against the client
 * address that sent them, in one budget with the admin page's sign-in form; past it, that address's
 * next token (the right one too) is refused unchecked, while other addresses go on.
 */

const HELD_BACK = /^Too many failed tokens from (\S+): wait (\d+) s, then retry with a current token\.$/;

/** Requests from a chosen loopback address (Linux routes all of 127/8 to this host). */
function from(localAddress: string) {
  return (url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) => raw(url, { ...options, localAddress });
}

/** Each route that takes a bearer token, asked with the headers `token` gives for it (a token among them). */
function everyRoute(s: Served, send: ReturnType<typeof from>, token: () => Record<string, string>): Array<Promise<RawResponse>> {
  return [
    send(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...token() }, body: INIT }),
    send(`${s.url}/v1/tools`, { headers: token() }),
    send(`${s.url}/metrics`, { headers: token() }),
    send(`${s.url}/readyz`, { headers: token() }),
    send(`${s.url}/sse`, { headers: token() }),
    send(`${s.url}/messages?sessionId=x`, { method: "POST", headers: { "content-type": "application/json", ...token() }, body: "{}" }),
  ];
}

const counter = (s: Served, name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(s.http.metrics.render())?.[1] ?? 0);

describe("failed bearer tokens, per client address", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({
      tokens: [
        { name: "alice", token: TOKENS.alice, scopes: ["admin", "metrics"] },
        { name: "bob", token: TOKENS.bob },
      ],
    });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("counts wrong tokens on every route, then holds the address back (429, Retry-After) even with the right token; another address goes on", async () => {
    const attacker = from("127.0.0.11");
    let guess = 0;
    const wrong = () => bearer(`guess-${guess++}-0123456789abcdef`);
    const first = await Promise.all(everyRoute(s, attacker, wrong).map(async (answer) => (await answer).status));
    expect(first).toEqual([401, 401, 401, 401, 401, 401]);
    for (let i = 0; i < 4; i++) expect((await attacker(`${s.url}/v1/tools`, { headers: wrong() })).status).toBe(401);
    expect(counter(s, "codemux_auth_failures_total")).toBe(10);

    // The bucket is empty: the right token is refused unchecked, on every route, with when to come back.
    const held = await attacker(`${s.url}/v1/tools`, { headers: bearer(TOKENS.alice) });
    expect(held.status).toBe(429);
    expect(Number(held.headers["retry-after"])).toBeGreaterThan(0);
    const message = JSON.parse(held.body).error.message as string;
    expect(message).toMatch(HELD_BACK);
    expect(HELD_BACK.exec(message)?.slice(1)).toEqual(["127.0.0.11", held.headers["retry-after"]]);
    for (const answer of await Promise.all(everyRoute(s, attacker, () => bearer(TOKENS.alice)))) {
      expect(answer.status).toBe(429);
      expect(answer.headers["retry-after"]).toBeDefined();
    }
    const mcp = await attacker(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice) }, body: INIT });
    expect(JSON.parse(mcp.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000, message: expect.stringMatching(HELD_BACK) } });
    // The X-API-Key header and ?apikey= are tokens too.
    expect((await attacker(`${s.url}/v1/tools`, { headers: { "x-api-key": TOKENS.alice } })).status).toBe(429);
    expect((await attacker(`${s.url}/v1/tools?apikey=${TOKENS.alice}`)).status).toBe(429);
    // The admin page's sign-in shares the budget.
    const signIn = await attacker(`${s.url}/ui/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: TOKENS.alice }).toString(),
    });
    expect(signIn.status).toBe(429);
    expect(signIn.body).toContain("Too many failed sign-ins from 127.0.0.11");
    // A probe without a token is not a guess: readiness still answers.
    expect((await attacker(`${s.url}/readyz`)).status).toBe(200);

    const other = from("127.0.0.12");
    expect((await other(`${s.url}/v1/tools`, { headers: bearer(TOKENS.bob) })).status).toBe(200);
    const metrics = await other(`${s.url}/metrics`, { headers: bearer(TOKENS.alice) });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^codemux_auth_held_back_total 10$/m);
    // Nothing was checked while held back: the failures stayed at ten.
    expect(metrics.body).toMatch(/^codemux_auth_failures_total 10$/m);
  });

  it("counts wrong tokens at the admin page's sign-in against the same address's bearer tokens", async () => {
    const guesser = from("127.0.0.13");
    for (let i = 0; i < 10; i++) {
      const answer = await guesser(`${s.url}/ui/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: `sign-in-guess-${i}-0123456789` }).toString(),
      });
      expect(answer.status).toBe(401);
    }
    const held = await guesser(`${s.url}/v1/tools`, { headers: bearer(TOKENS.bob) });
    expect(held.status).toBe(429);
    expect(JSON.parse(held.body).error.message).toMatch(HELD_BACK);
  });

  it("does not count one stale token again and again: a client retrying its revoked token locks no one out", async () => {
    const stale = from("127.0.0.14");
    for (let i = 0; i < 15; i++) expect((await stale(`${s.url}/v1/tools`, { headers: bearer("revoked-token-0123456789") })).status).toBe(401);
    expect((await stale(`${s.url}/v1/tools`, { headers: bearer(TOKENS.bob) })).status).toBe(200);
  });
});

describe("failed bearer tokens behind a trusted proxy", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ trustedProxies: ["127.0.0.1"] });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("counts them against the client the proxy names in X-Forwarded-For, not against the proxy", async () => {
    const proxy = from("127.0.0.1");
    const as = (client: string, token: string) => proxy(`${s.url}/v1/tools`, { headers: { ...bearer(token), "x-forwarded-for": client } });
    for (let i = 0; i < 10; i++) expect((await as("203.0.113.20", `proxied-guess-${i}-0123456789`)).status).toBe(401);
    const held = await as("203.0.113.20", TOKENS.alice);
    expect(held.status).toBe(429);
    expect(HELD_BACK.exec(JSON.parse(held.body).error.message)?.[1]).toBe("203.0.113.20");
    expect((await as("203.0.113.21", TOKENS.alice)).status).toBe(200);
    // The proxy's own requests (no forwarded client) are another address again.
    expect((await proxy(`${s.url}/v1/tools`, { headers: bearer(TOKENS.alice) })).status).toBe(200);
  });
});
