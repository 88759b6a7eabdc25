import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux } from "@codemux/server";
import { CodemuxHttpServer, HttpError } from "../src/index";
import { INIT, MCP_HEADERS, TOKENS, bearer, config, misbehaving, raw, serve, type Served } from "./helpers";

/** Opens an MCP session as `token`'s principal; returns its id. */
async function openSession(s: Served, token: string): Promise<string> {
  const res = await raw(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...bearer(token) }, body: INIT });
  expect(res.status).toBe(200);
  return res.headers["mcp-session-id"] as string;
}

describe("hostile HTTP battery", () => {
  let s: Served;
  beforeAll(async () => {
    // The limit in all is under test here; principals-limits.test.ts has each principal's share.
    s = await serve({ maxBodyBytes: 64 * 1024, headersTimeoutMs: 300, requestTimeoutMs: 600, maxSessions: 3, maxSessionsPerPrincipal: 3 });
  });
  afterAll(async () => {
    await s?.close();
  });

  const everything = () => [...s.logs.map((l) => JSON.stringify(l))].join("\n");

  it("refuses a request without a token with 401 and WWW-Authenticate", async () => {
    const res = await raw(`${s.url}/v1/tools`);
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="codemux"');
    expect(JSON.parse(res.body).error.code).toBe("unauthorized");
  });

  it("refuses a wrong token, of the same length or not, without echoing it", async () => {
    for (const wrong of ["alice-token-0123456780", "x", "a".repeat(10_000)]) {
      const res = await raw(`${s.url}/v1/tools`, { headers: bearer(wrong) });
      expect(res.status).toBe(401);
      expect(res.body).not.toContain(wrong.slice(0, 20));
    }
    expect((await raw(`${s.url}/v1/tools`, { headers: { "x-api-key": "nope-nope-nope" } })).status).toBe(401);
  });

  it("refuses a token in the wrong place: no Bearer scheme, Basic, a cookie, the body", async () => {
    const places: Array<Record<string, string>> = [
      { authorization: TOKENS.alice },
      { authorization: `Basic ${Buffer.from(`alice:${TOKENS.alice}`).toString("base64")}` },
      { cookie: `apikey=${TOKENS.alice}` },
      { "x-token": TOKENS.alice },
    ];
    for (const headers of places) expect((await raw(`${s.url}/v1/tools`, { headers })).status).toBe(401);
    const inBody = await raw(`${s.url}/v1/exec`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: "export default 1", token: TOKENS.alice }),
    });
    expect(inBody.status).toBe(401);
  });

  it("accepts Bearer, X-API-Key and ?apikey=, and masks the query token in every log line", async () => {
    expect((await raw(`${s.url}/v1/tools`, { headers: bearer(TOKENS.alice) })).status).toBe(200);
    expect((await raw(`${s.url}/v1/tools`, { headers: { "x-api-key": TOKENS.bob } })).status).toBe(200);
    expect((await raw(`${s.url}/v1/tools?apikey=${TOKENS.alice}&limit=2`)).status).toBe(200);
    const line = s.logs.find((l) => String(l.path).startsWith("/v1/tools?apikey="));
    expect(line?.path).toBe("/v1/tools?apikey=***&limit=2");
    expect(line?.principal).toBe("token:alice");
    expect(everything()).not.toContain(TOKENS.alice);
    expect(everything()).not.toContain(TOKENS.bob);
  });

  it("refuses a foreign Origin with 403 and lets a loopback page through on a loopback bind", async () => {
    const foreign = await raw(`${s.url}/v1/tools`, { headers: { ...bearer(TOKENS.alice), origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error.code).toBe("invalid_origin");
    expect(foreign.headers["access-control-allow-origin"]).toBeUndefined();
    expect(
      (await raw(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice), origin: "http://evil.example" }, body: INIT })).status,
    ).toBe(403);
    expect((await raw(`${s.url}/v1/tools`, { headers: { ...bearer(TOKENS.alice), origin: `http://localhost:5173` } })).status).toBe(200);
  });

  it("refuses a rebinding Host with 403 before auth is even looked at", async () => {
    const res = await raw(`${s.url}/v1/tools`, { headers: { ...bearer(TOKENS.alice), host: "attacker.example:3920" } });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error.code).toBe("invalid_host");
    expect((await raw(`${s.url}/v1/tools`, { headers: { ...bearer(TOKENS.alice), host: `localhost:${s.http.port}` } })).status).toBe(200);
  });

  it("refuses an oversized body with 413, declared or chunked", async () => {
    const big = JSON.stringify({ code: `export default "${"x".repeat(100 * 1024)}"` });
    const declared = await raw(`${s.url}/v1/exec`, { method: "POST", headers: { ...bearer(TOKENS.alice), "content-type": "application/json" }, body: big });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body).error.code).toBe("too_large");
    const chunked = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice), "transfer-encoding": "chunked" },
      body: big,
    });
    expect(chunked.status).toBe(413);
  });

  it("cuts off a slowloris client that never finishes its headers", async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(s.http.port, "127.0.0.1");
      let received = "";
      socket.on("data", (d) => (received += d.toString()));
      socket.on("close", () => resolve(received));
      socket.write(`GET /v1/tools HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
      // One header line now and then, never the blank line that ends them.
      const drip = setInterval(() => socket.writable && socket.write(`X-Drip: ${Date.now()}\r\n`), 100);
      socket.on("close", () => clearInterval(drip));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it("cuts off a client that sends its body too slowly", async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(s.http.port, "127.0.0.1");
      let received = "";
      socket.on("data", (d) => (received += d.toString()));
      socket.on("close", () => resolve(received));
      socket.write(
        `POST /v1/exec HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKENS.alice}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"code":`,
      );
      const drip = setInterval(() => socket.writable && socket.write(" "), 100);
      socket.on("close", () => clearInterval(drip));
    });
    expect(answer).toMatch(/408|^$/);
  });

  it("answers another principal's session id exactly like an unknown one (404)", async () => {
    const id = await openSession(s, TOKENS.alice);
    const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const headers = { ...MCP_HEADERS, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" };
    const stolen = await raw(`${s.url}/mcp`, { method: "POST", headers: { ...headers, ...bearer(TOKENS.bob) }, body: list });
    expect(stolen.status).toBe(404);
    const unknown = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers: { ...headers, ...bearer(TOKENS.bob), "mcp-session-id": "00000000-0000-4000-8000-000000000000" },
      body: list,
    });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(stolen.body)).toEqual(JSON.parse(unknown.body));
    expect(JSON.parse(stolen.body).error.code).toBe(-32001);
    expect((await raw(`${s.url}/mcp`, { method: "DELETE", headers: { ...headers, ...bearer(TOKENS.bob) } })).status).toBe(404);
    const own = await raw(`${s.url}/mcp`, { method: "POST", headers: { ...headers, ...bearer(TOKENS.alice) }, body: list });
    expect(own.status).toBe(200);
    expect(own.body).toContain("search_tools");
    expect((await raw(`${s.url}/mcp`, { method: "DELETE", headers: { ...headers, ...bearer(TOKENS.alice) } })).status).toBe(200);
    expect((await raw(`${s.url}/mcp`, { method: "POST", headers: { ...headers, ...bearer(TOKENS.alice) }, body: list })).status).toBe(404);
  });

  it("keeps a result handle to the principal that made it", async () => {
    const made = await raw(`${s.url}/v1/tools/m__huge/call`, {
      method: "POST",
      headers: { ...bearer(TOKENS.alice), "content-type": "application/json" },
      body: JSON.stringify({ bytes: 100_000, lines: true }),
    });
    expect(made.status).toBe(200);
    const handle = JSON.parse(made.body).spilled.handle as string;
    expect(handle).toMatch(/^res_[0-9a-f]{12}$/);
    const theirs = await raw(`${s.url}/v1/results/${handle}?op=head&lines=2`, { headers: bearer(TOKENS.bob) });
    expect(theirs.status).toBe(404);
    expect(theirs.body).not.toContain("line 1");
    const mine = await raw(`${s.url}/v1/results/${handle}?op=head&lines=2`, { headers: bearer(TOKENS.alice) });
    expect(mine.status).toBe(200);
    expect(JSON.parse(mine.body).text).toContain("line 1:");
  });

  it("refuses malformed JSON with 400 (REST) and a JSON-RPC parse error (MCP), calling nothing", async () => {
    const calls = async () =>
      JSON.parse((await raw(`${s.url}/v1/tools/m__counter/call`, { method: "POST", headers: bearer(TOKENS.alice) })).body).value.calls as number;
    const before = await calls();
    const rest = await raw(`${s.url}/v1/tools/m__counter/call`, {
      method: "POST",
      headers: { ...bearer(TOKENS.alice), "content-type": "application/json" },
      body: "{not json",
    });
    expect(rest.status).toBe(400);
    expect(JSON.parse(rest.body).error.code).toBe("invalid_json");
    const mcp = await raw(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice) }, body: "{not json" });
    expect(mcp.status).toBe(400);
    expect(JSON.parse(mcp.body).error.code).toBe(-32700);
    expect(await calls()).toBe(before + 1);
  });

  it("refuses wrong methods (405 with Allow) and content types (415)", async () => {
    const put = await raw(`${s.url}/mcp`, { method: "PUT", headers: bearer(TOKENS.alice) });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toContain("POST");
    expect((await raw(`${s.url}/v1/exec`, { headers: bearer(TOKENS.alice) })).status).toBe(405);
    expect((await raw(`${s.url}/v1/tools`, { method: "POST", headers: bearer(TOKENS.alice) })).status).toBe(405);
    const form = await raw(`${s.url}/v1/exec`, {
      method: "POST",
      headers: { ...bearer(TOKENS.alice), "content-type": "application/x-www-form-urlencoded" },
      body: "code=1",
    });
    expect(form.status).toBe(415);
    const text = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers: { ...bearer(TOKENS.alice), "content-type": "text/plain", accept: MCP_HEADERS.accept },
      body: INIT,
    });
    expect(text.status).toBe(415);
  });

  it("asks for a session id on requests other than initialize, and 404s unknown paths naming the right ones", async () => {
    const res = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(400);
    const lost = await raw(`${s.url}/mcp/`.replace("/mcp/", "/streamable"), { headers: bearer(TOKENS.alice) });
    expect(lost.status).toBe(404);
    expect(JSON.parse(lost.body).error.message).toContain("/mcp");
  });

  it("refuses sessions past the limit with 503 capacity and Retry-After", async () => {
    const opened: string[] = [];
    let refused: Awaited<ReturnType<typeof raw>> | undefined;
    for (let i = 0; i < 5 && !refused; i++) {
      const res = await raw(`${s.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...bearer(TOKENS.bob) }, body: INIT });
      if (res.status === 503) refused = res;
      else opened.push(res.headers["mcp-session-id"] as string);
    }
    expect(refused?.headers["retry-after"]).toBe("5");
    expect(JSON.parse(refused?.body ?? "{}").error.message).toMatch(/Capacity: 3 MCP sessions/);
    for (const id of opened) await raw(`${s.url}/mcp`, { method: "DELETE", headers: { ...MCP_HEADERS, ...bearer(TOKENS.bob), "mcp-session-id": id } });
  });
});

describe("deeply nested input", () => {
  it("answers arguments nested 100,000 levels with a 400 naming the bound, on MCP and REST, never a 500", async () => {
    const s = await serve();
    try {
      const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
      const bound = "The request body nests deeper than 128 levels, the limit; send flatter JSON.";
      const rest = await raw(`${s.url}/v1/tools/m__echo/call`, {
        method: "POST",
        headers: { ...bearer(TOKENS.alice), "content-type": "application/json" },
        body: `{"text":${deep}}`,
      });
      expect(rest.status).toBe(400);
      expect(JSON.parse(rest.body).error).toEqual({ code: "bad_request", message: bound, limit: 128 });
      const exec = await raw(`${s.url}/v1/exec`, {
        method: "POST",
        headers: { ...bearer(TOKENS.alice), "content-type": "application/json" },
        body: `{"code":"export default 1","x":${deep}}`,
      });
      expect(exec.status).toBe(400);
      const id = await openSession(s, TOKENS.alice);
      const mcp = await raw(`${s.url}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice), "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
        body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"m__echo","args":{"text":${deep}}}}}`,
      });
      expect(mcp.status).toBe(400);
      expect(JSON.parse(mcp.body)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: bound } });
      // Brackets inside strings are text, not nesting.
      const text = await raw(`${s.url}/v1/tools/m__echo/call`, {
        method: "POST",
        headers: { ...bearer(TOKENS.alice), "content-type": "application/json" },
        body: JSON.stringify({ text: `${"[{".repeat(1000)}\\"` }),
      });
      expect(text.status).toBe(200);
      expect(s.logs.filter((l) => l.msg === "internal error")).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe("exposure", () => {
  it("refuses to bind a non-loopback address without a token, unless told to", async () => {
    const core = new Codemux({ config: config({ m: misbehaving() }) });
    try {
      expect(() => new CodemuxHttpServer(core, { host: "0.0.0.0", port: 0, log: () => undefined })).toThrow(/Refusing to serve 0\.0\.0\.0:0 without a token/);
      try {
        new CodemuxHttpServer(core, { host: "0.0.0.0", port: 0, log: () => undefined });
      } catch (error) {
        expect(HttpError.isInstance(error)).toBe(true);
      }
      expect(() => new CodemuxHttpServer(core, { host: "0.0.0.0", port: 0, insecureNoAuth: true, log: () => undefined })).not.toThrow();
      expect(() => new CodemuxHttpServer(core, { host: "0.0.0.0", port: 0, tokens: [{ name: "a", token: TOKENS.alice }], log: () => undefined })).not.toThrow();
    } finally {
      await core.close();
    }
  });

  it("sends CORS headers only to configured origins, and exposes Mcp-Session-Id", async () => {
    const s = await serve({ corsOrigins: ["https://app.example"] });
    try {
      const preflight = await raw(`${s.url}/mcp`, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers["access-control-allow-origin"]).toBe("https://app.example");
      expect(preflight.headers["access-control-allow-headers"]).toContain("Mcp-Session-Id");
      const res = await raw(`${s.url}/v1/tools`, { headers: { ...bearer(TOKENS.alice), origin: "https://app.example" } });
      expect(res.headers["access-control-expose-headers"]).toContain("Mcp-Session-Id");
      expect((await raw(`${s.url}/mcp`, { method: "OPTIONS", headers: { origin: "https://other.example" } })).status).toBe(403);
    } finally {
      await s.close();
    }
  });
});
