import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { link, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, serve, type Served } from "./helpers";

const T = { alice: "alice-file-token-0123", bob: "bob-file-token-4567", carol: "carol-file-token-89ab", old: "old-file-token-cdef" };
const ENTRIES = {
  alice: { name: "alice", token: T.alice, groups: ["eng", "oncall"], scopes: ["admin"] },
  bob: { name: "bob", token: T.bob, scopes: ["metrics"] },
  carol: { name: "carol", token: T.carol },
  old: { name: "old", token: T.old, expiresAt: "2020-01-01T00:00:00Z" },
};

let dir: string;
let file: string;
/** Replaces the token file as an editor does: a new file renamed over it. */
async function writeTokens(entries: unknown): Promise<void> {
  const next = join(dir, `tokens.${Math.random().toString(36).slice(2)}.tmp`);
  await writeFile(next, typeof entries === "string" ? entries : JSON.stringify(entries));
  await rename(next, file);
}

/** Waits (bounded) until `check` holds; the watcher's timing is not asserted, only that it comes. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

const status = async (url: string, token: string, init: RequestInit = {}) => (await fetch(url, { ...init, headers: bearer(token) })).status;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-tokens-"));
  file = join(dir, "tokens.json");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a token file with groups, scopes and expiry", () => {
  let s: Served;
  beforeAll(async () => {
    await writeTokens(Object.values(ENTRIES));
    s = await serve({ tokens: [], tokenFile: file, tokenFilePollMs: 50, compatRoutes: true, reload: async () => ({ added: [], removed: [], changed: [] }) });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("refuses an expired token with 401 saying it expired", async () => {
    const response = await fetch(`${s.url}/v1/tools`, { headers: bearer(T.old) });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(
      /^Bearer realm="codemux", error="invalid_token", error_description="Token 'old' expired at 2020-01-01T00:00:00.000Z/,
    );
    expect((await json(response)).error).toMatchObject({
      code: "unauthorized",
      message: 'Token "old" expired at 2020-01-01T00:00:00.000Z; ask for a new one (its "expiresAt" in the token file).',
    });
  });

  it("gives the session the token's groups and scopes, over MCP and REST", async () => {
    const seen: unknown[] = [];
    s.core.pipeline.use(async (ctx, next) => {
      seen.push({ principal: ctx.session.principal, groups: ctx.session.groups, scopes: ctx.session.scopes, origin: ctx.origin });
      return next(ctx);
    });
    const client = new Client({ name: "t", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(T.alice) } }));
    await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "x" } } });
    await client.close();
    await fetch(`${s.url}/v1/tools/m__echo/call`, { method: "POST", headers: { ...bearer(T.carol), "content-type": "application/json" }, body: "{}" });
    expect(seen).toEqual([
      { principal: "token:alice", groups: ["eng", "oncall"], scopes: ["admin"], origin: "call_tool" },
      // Another token declares scopes, so carol's undeclared ones are none.
      { principal: "token:carol", groups: undefined, scopes: [], origin: "rest" },
    ]);
  });

  it("needs the metrics scope for /metrics and the admin scope for a reload; others get 403 with the reason", async () => {
    expect(await status(`${s.url}/metrics`, T.bob)).toBe(200);
    const refused = await fetch(`${s.url}/metrics`, { headers: bearer(T.alice) });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toMatch(/error="insufficient_scope".*scope="metrics"/);
    expect((await json(refused)).error).toMatchObject({
      code: "forbidden",
      message:
        'Reading /metrics needs the "metrics" scope, which token:alice does not hold (it holds admin); grant it in the token file ("scopes") or at the authorization server.',
    });
    expect(await status(`${s.url}/restart`, T.alice, { method: "POST" })).toBe(200);
    const reload = await fetch(`${s.url}/restart`, { method: "POST", headers: bearer(T.bob) });
    expect(reload.status).toBe(403);
    expect((await json(reload)).error).toMatchObject({
      message: expect.stringContaining('Reloading the config needs the "admin" scope, which token:bob does not hold'),
    });
    expect(await status(`${s.url}/metrics`, T.carol)).toBe(403);
  });

  it("re-reads the file when it changes: a removed token stops at once and its open sessions end; others keep theirs", async () => {
    const alice = new Client({ name: "alice", version: "1" });
    await alice.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(T.alice) } }));
    const bob = new Client({ name: "bob", version: "1" });
    await bob.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(T.bob) } }));
    expect(s.http.sessions.held("token:alice")).toBeGreaterThan(0);
    await writeTokens([ENTRIES.bob, ENTRIES.carol]);
    await until(async () => (await status(`${s.url}/v1/tools`, T.alice)) === 401, "alice refused after her token was removed");
    expect(s.http.sessions.held("token:alice")).toBe(0);
    await expect(alice.listTools()).rejects.toThrow();
    expect((await bob.listTools()).tools.length).toBeGreaterThan(0);
    await Promise.all([alice.close(), bob.close()]);
  });

  it("ends a session when its token expires, and refuses the token from then on", async () => {
    const brief = { name: "brief", token: "brief-file-token-0123", expiresAt: new Date(Date.now() + 1500).toISOString() };
    await writeTokens([ENTRIES.alice, ENTRIES.bob, ENTRIES.carol, brief]);
    await until(async () => (await status(`${s.url}/v1/tools`, brief.token)) === 200, "the brief token accepted");
    const client = new Client({ name: "brief", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(brief.token) } }));
    expect(s.http.sessions.held("token:brief")).toBe(1);
    await until(async () => s.http.sessions.held("token:brief") === 0, "the brief token's session closed at its expiry");
    expect(await status(`${s.url}/v1/tools`, brief.token)).toBe(401);
    await client.close();
  });

  it("keeps the last good tokens when the file is broken or blank, logs why, and stays closed when every token is revoked", async () => {
    await writeTokens('[{"name": "bob", "token": ');
    await until(async () => s.logs.some((l) => l.msg === "token file not reloaded; the last good tokens stay in force"), "the bad file reported");
    expect(String(s.logs.find((l) => l.msg === "token file not reloaded; the last good tokens stay in force")?.error)).toMatch(
      /looks like JSON but does not parse/,
    );
    // The folder's event and the poll both report the edit: the same broken text is reported once.
    await s.http.reloadTokens();
    expect(s.logs.filter((l) => l.msg === "token file not reloaded; the last good tokens stay in force")).toHaveLength(1);
    expect(await status(`${s.url}/v1/tools`, T.bob)).toBe(200);
    // A line with a typo is refused naming its line, and the last good tokens stay.
    await writeTokens(`alice:${T.alice}\nbob=${T.bob}\n`);
    await until(async () => s.logs.some((l) => String(l.error).includes("line 2 is not name:token; did you mean bob:...")), "the typo reported");
    expect(JSON.stringify(s.logs)).not.toContain(T.bob);
    expect(await status(`${s.url}/v1/tools`, T.bob)).toBe(200);
    // A blank file is an editor mid-write, not "no tokens": nothing changes.
    await writeTokens("");
    await until(
      async () => s.logs.some((l) => String(l.error).includes("is empty (being written?); to revoke every token, write [] instead.")),
      "the blank file reported",
    );
    expect(await status(`${s.url}/v1/tools`, T.bob)).toBe(200);
    // [] revokes every token, and the server stays closed: it never falls back to serving without auth.
    await writeTokens([]);
    await until(async () => (await status(`${s.url}/v1/tools`, T.bob)) === 401, "bob refused once every token was revoked");
    expect((await fetch(`${s.url}/v1/tools`)).status).toBe(401);
    // A good file after it applies again.
    await writeTokens([ENTRIES.carol]);
    await until(async () => (await status(`${s.url}/v1/tools`, T.carol)) === 200, "carol accepted from the good file");
    expect(await status(`${s.url}/v1/tools`, T.bob)).toBe(401);
  });
});

describe("a token file on a mount whose changes raise no file events", () => {
  it("is still re-read: its stat is polled", async () => {
    // Written through a hard link in another folder, the file changes without an event in the folder codemux watches.
    const elsewhere = await mkdtemp(join(tmpdir(), "codemux-tokens-elsewhere-"));
    const original = join(elsewhere, "tokens.json");
    const watched = join(dir, "linked-tokens.json");
    await writeFile(original, JSON.stringify([ENTRIES.alice]));
    await link(original, watched);
    const s = await serve({ tokens: [], tokenFile: watched, tokenFilePollMs: 50 });
    try {
      expect(await status(`${s.url}/v1/tools`, T.bob)).toBe(401);
      await writeFile(original, JSON.stringify([ENTRIES.alice, ENTRIES.bob]));
      await until(async () => (await status(`${s.url}/v1/tools`, T.bob)) === 200, "bob accepted once the poll saw the change");
    } finally {
      await s.close();
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

describe("where no token declares scopes", () => {
  it("keeps every right for every token, as before scopes existed (a single-user setup loses nothing)", async () => {
    const s = await serve({ compatRoutes: true, reload: async () => ({ added: [], removed: [], changed: [] }) });
    try {
      expect(await status(`${s.url}/metrics`, "alice-token-0123456789")).toBe(200);
      expect(await status(`${s.url}/restart`, "bob-token-9876543210", { method: "POST" })).toBe(200);
    } finally {
      await s.close();
    }
  });
});
