import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, policiesOf } from "@codemux/server";
import { CodemuxHttpServer } from "../src/index";
import { bearer, config, misbehaving, raw, serve, type Served } from "./helpers";

const ADMIN = "admin-ui-token-0123456789";
const OTHER = "other-ui-token-0123456789";

/** Signs in with `token`; the session cookie (`name=value`) or undefined, and the answer. */
async function signIn(url: string, token: string): Promise<{ status: number; cookie: string | undefined; setCookie: string; body: string }> {
  const response = await fetch(`${url}/ui/login`, { method: "POST", body: new URLSearchParams({ token }), redirect: "manual" });
  const setCookie = response.headers.get("set-cookie") ?? "";
  return { status: response.status, cookie: setCookie ? setCookie.split(";")[0] : undefined, setCookie, body: await response.text() };
}

describe("the admin page's sign-in, over HTTP", () => {
  let dir: string;
  let tokenFile: string;
  let served: Served;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-ui-auth-"));
    tokenFile = join(dir, "tokens.json");
    await writeFile(
      tokenFile,
      JSON.stringify([
        { name: "root", token: ADMIN, scopes: ["admin"] },
        { name: "other", token: OTHER, scopes: ["admin"] },
      ]),
    );
    served = await serve({ tokens: [], tokenFile, tokenFilePollMs: 50 });
  });
  afterAll(async () => {
    await served.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a random session id in the cookie (HttpOnly, SameSite=Strict, Path=/ui), never the token", async () => {
    const { status, cookie, setCookie } = await signIn(served.url, ADMIN);
    expect(status).toBe(303);
    expect(setCookie).toMatch(/^codemux_ui=[A-Za-z0-9_-]{43}; Path=\/ui; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(cookie).not.toContain(ADMIN);
  });

  it("refuses a wrong token with a sentence and no cookie", async () => {
    const { status, setCookie, body } = await signIn(served.url, "not-a-token-at-all");
    expect(status).toBe(401);
    expect(setCookie).toBe("");
    expect(body).toContain("That token is not valid here. Give a current admin token.");
  });

  it("sends a browser without a session to the sign-in page, and refuses its posts", async () => {
    const page = await fetch(`${served.url}/ui/jobs`, { redirect: "manual" });
    expect([page.status, page.headers.get("location")]).toEqual([303, "login"]);
    const post = await fetch(`${served.url}/ui/restart`, { method: "POST", body: new URLSearchParams({ server: "m" }) });
    expect(post.status).toBe(401);
    expect(await post.text()).toContain("Sign in first");
  });

  it("refuses a post from another site's page even with the session cookie and its CSRF token", async () => {
    const { cookie } = await signIn(served.url, ADMIN);
    const page = await (await fetch(`${served.url}/ui/`, { headers: { cookie: cookie as string } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] as string;
    const answer = await raw(`${served.url}/ui/restart`, {
      method: "POST",
      headers: {
        cookie: cookie as string,
        origin: "https://evil.example",
        "content-type": "application/x-www-form-urlencoded",
        host: new URL(served.url).host,
      },
      body: new URLSearchParams({ server: "m", csrf }).toString(),
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain("may not call this server");
  });

  it("ends a principal's sessions when the token file drops its token", async () => {
    const { cookie } = await signIn(served.url, OTHER);
    const before = await fetch(`${served.url}/ui/principals`, { headers: { cookie: cookie as string }, redirect: "manual" });
    expect(before.status).toBe(200);
    await writeFile(tokenFile, JSON.stringify([{ name: "root", token: ADMIN, scopes: ["admin"] }]));
    await served.http.reloadTokens();
    const after = await fetch(`${served.url}/ui/principals`, { headers: { cookie: cookie as string }, redirect: "manual" });
    expect([after.status, after.headers.get("location")]).toEqual([303, "login"]);
  });

  it("answers only its own pages and assets: a name of Object's prototype is not one", async () => {
    const { cookie } = await signIn(served.url, ADMIN);
    for (const name of ["constructor", "__proto__", "toString"]) {
      const answer = await fetch(`${served.url}/ui/${name}`, { headers: { cookie: cookie as string } });
      expect(answer.status, name).toBe(404);
    }
  });

  it("links, loads and redirects only by relative paths, so the page works under a proxy's path prefix", async () => {
    const { cookie } = await signIn(served.url, ADMIN);
    for (const name of ["", "tools?q=echo", "tool?name=m__echo", "activity", "jobs", "approvals", "principals", "login"]) {
      const text = await (await fetch(`${served.url}/ui/${name}`, { headers: { cookie: cookie as string } })).text();
      expect(text, name).toMatch(/href="/);
      expect(text.match(/(?:href|src|action)="(?:\/|[a-z]+:)/g), name).toBeNull();
    }
    const redirects = [await fetch(`${served.url}/ui`, { redirect: "manual" }), await fetch(`${served.url}/ui/tools`, { redirect: "manual" })];
    expect(redirects.map((r) => r.headers.get("location"))).toEqual(["ui/", "login"]);
  });

  it("refuses a sign-in body past its bound before reading it", async () => {
    const answer = await fetch(`${served.url}/ui/login`, { method: "POST", body: "token=".padEnd(300 * 1024, "x") });
    expect(answer.status).toBe(413);
  });
});

describe("the admin page of a server without tokens", () => {
  it("signs in without a token, as the anonymous principal that holds every right there", async () => {
    const served = await serve({ tokens: [] });
    try {
      const { status, cookie } = await signIn(served.url, "");
      expect(status).toBe(303);
      const page = await (await fetch(`${served.url}/ui/`, { headers: { cookie: cookie as string } })).text();
      expect(page).toContain("anonymous");
      expect(page).toContain('data-server="m"');
    } finally {
      await served.close();
    }
  });
});

describe("the admin page's Principals and policies", () => {
  it("shows who holds a token with what rights, never the token, and the policy rules in force", async () => {
    const policies = policiesOf(
      { policies: { default: "deny", rules: [{ name: "ci-read", principals: ["token:ci"], tools: ["m__*"], readOnly: true, callsPerMinute: 30 }] } },
      "codemux.json",
    );
    const core = new Codemux({ config: config({ m: misbehaving() }), ...(policies ? { policies } : {}) });
    core.start();
    const http = new CodemuxHttpServer(core, {
      port: 0,
      tokens: [
        { name: "root", token: ADMIN, scopes: ["admin"], groups: ["ops"] },
        { name: "ci", token: OTHER, scopes: ["mcp"], expiresAt: "2030-01-01T00:00:00Z" },
      ],
      log: () => undefined,
    });
    await http.listen();
    try {
      const { cookie } = await signIn(http.url, ADMIN);
      const page = await (await fetch(`${http.url}/ui/principals`, { headers: { cookie: cookie as string } })).text();
      expect(page).toMatch(/<td>token:root<\/td><td>ops<\/td><td>admin<\/td><td>never<\/td>/);
      expect(page).toMatch(/<td>token:ci<\/td><td><\/td><td>mcp<\/td><td>2030-01-01 00:00:00<\/td>/);
      expect(page).toContain("A principal no rule matches: <strong>deny</strong>");
      expect(page).toMatch(/<td>ci-read<\/td><td>principals token:ci<\/td><td>m__\*<\/td>\s*<td>read-only tools, 30 calls\/min<\/td>/);
      expect(page).not.toContain(ADMIN);
      expect(page).not.toContain(OTHER);
    } finally {
      await http.close();
      await core.close();
    }
  });
});

describe("failed sign-ins at the admin page", () => {
  const METRICS = "metrics-ui-token-0123456789";
  const USER = "user-ui-token-0123456789";
  let served: Served;
  /** A sign-in from `client`, as a trusted proxy in front of it forwards it. */
  const signInFrom = async (client: string, token: string) => {
    const answer = await fetch(`${served.url}/ui/login`, {
      method: "POST",
      headers: { "x-forwarded-for": client },
      body: new URLSearchParams({ token }),
      redirect: "manual",
    });
    return { status: answer.status, retryAfter: answer.headers.get("retry-after"), body: await answer.text() };
  };
  const refusedCount = async (reason: string) => {
    const text = await (await fetch(`${served.url}/metrics`, { headers: bearer(METRICS) })).text();
    return Number(new RegExp(`^codemux_ui_sign_ins_refused_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    served = await serve({
      trustedProxies: ["127.0.0.1", "::1"],
      tokens: [
        { name: "root", token: ADMIN, scopes: ["admin"] },
        { name: "user", token: USER, scopes: ["mcp"] },
        { name: "scraper", token: METRICS, scopes: ["metrics"] },
      ],
    });
  });
  afterAll(() => served.close());

  it("counts each refusal in /metrics by reason, and holds back an address that keeps guessing, even with the right token", async () => {
    const attacker = "203.0.113.5";
    expect((await signInFrom(attacker, USER)).status).toBe(403);
    expect(await refusedCount("not_admin")).toBe(1);
    for (let i = 0; i < 9; i++) expect((await signInFrom(attacker, `guess-${i}`)).status).toBe(401);
    expect(await refusedCount("bad_token")).toBe(9);
    const held = await signInFrom(attacker, ADMIN);
    expect(held.status).toBe(429);
    expect(Number(held.retryAfter)).toBeGreaterThan(0);
    expect(held.body).toContain(`Too many failed sign-ins from ${attacker}: wait ${held.retryAfter} s, then sign in with a current admin token.`);
    // A hammering burst changes nothing: each is refused before its token is looked at.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => signInFrom(attacker, `burst-${i}`)));
    expect(new Set(burst.map((b) => b.status))).toEqual(new Set([429]));
    expect(await refusedCount("bad_token")).toBe(9);
    expect(await refusedCount("too_many")).toBe(21);
  });

  it("holds back only the guessing address: an admin elsewhere still signs in", async () => {
    for (let i = 0; i < 12; i++) await signInFrom("198.51.100.7", `guess-${i}`);
    expect((await signInFrom("198.51.100.7", ADMIN)).status).toBe(429);
    expect((await signInFrom("198.51.100.8", ADMIN)).status).toBe(303);
  });
});
