import { Codemux } from "@codemux/server";
import { loginServer, principalAuthDirectory, readAuthRecord } from "@codemux/pool";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { completeInBrowser, startProtectedServer, type ProtectedServerOptions } from "../../pool/test/auth-fixture";
import { freePort } from "../../pool/test/helpers";
import { CodemuxHttpServer } from "../src/index";
import { config, raw, restAs, TOKENS } from "./helpers";

/**
 * Per-principal downstream logins finished by a REMOTE browser: codemux serves with `publicUrl` (its own URL here),
 * so the authorization server sends the browser back to codemux's /oauth/callback, not to a loopback on the host.
 * The real OAuth authorization server and protected MCP server of the pool's tests; the test's fetch plays the browser.
 */
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * `publicUrl`: none (false), codemux's own address (the default), or an https one a TLS proxy in front would answer at (the
 * test's browser then reaches codemux at its own address, as the proxy would, with the public Host).
 */
async function gateway(options: { redirectPort?: number; publicUrl?: boolean | string; downstream?: ProtectedServerOptions } = {}) {
  const root = mkdtempSync(join(tmpdir(), "codemux-callback-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const env = { ...process.env, CODEMUX_HOME: root };
  const dir = join(root, "auth");
  const downstream = await startProtectedServer(options.downstream);
  cleanups.push(() => downstream.close());
  // The operator's own login lists the tools; it never serves a principal's call.
  await loginServer({ server: "p", url: downstream.url, dir, timeoutMs: 30_000, onAuthorizationUrl: (url) => void completeInBrowser(url.href) });
  const core = new Codemux({
    config: config({
      p: {
        url: downstream.url,
        credentials: "per-principal",
        isolation: "principal",
        ...(options.redirectPort ? { oauth: { redirectPort: options.redirectPort } } : {}),
      },
    }),
    poolOptions: { env, retryDelaysMs: [] },
  });
  core.start();
  await core.ready();
  const port = await freePort();
  const local = `http://127.0.0.1:${port}`;
  const publicUrl = typeof options.publicUrl === "string" ? options.publicUrl : local;
  /** What the browser reaches for a public URL: codemux itself, with the public Host (a TLS proxy's job). */
  const browse = async (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> => {
    const answer = await raw(url.replace(publicUrl, local), { ...init, headers: { ...init.headers, host: new URL(publicUrl).host } });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) for (const one of [value ?? []].flat()) headers.append(name, one);
    return new Response(answer.body, { status: answer.status, headers });
  };
  const http = new CodemuxHttpServer(core, {
    port,
    ...(options.publicUrl === false ? {} : { publicUrl }),
    tokens: [
      { name: "alice", token: TOKENS.alice },
      { name: "bob", token: TOKENS.bob },
    ],
    log: () => undefined,
  });
  await http.listen();
  cleanups.push(async () => {
    await http.close();
    await core.close();
  });
  const rest = restAs(local);
  const whoami = (token: string) => rest(token, "/v1/tools/p__whoami/call", {});
  /** The authorization URL the refused call of `token`'s principal names. */
  const loginUrl = async (token: string) => {
    const refused = await whoami(token);
    const message = JSON.stringify(refused.body);
    const url = /open (http\S+) in a browser/.exec(message)?.[1];
    if (!url) throw new Error(`no login URL in ${refused.status} ${message}`);
    return url;
  };
  const tokensOf = async (principal: string) => (await readAuthRecord(principalAuthDirectory(dir, principal), "p"))?.tokens?.access_token;
  /** A browser unlocks codemux's page at a login link with `token` (none: no token field), from `origin`: the redirect it gets and the cookie set. */
  const unlock = async (link: string, token: string | undefined, origin = publicUrl) => {
    const answer = await browse(`${publicUrl}/oauth/login`, {
      method: "POST",
      headers: { origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ login: new URL(link).searchParams.get("login") ?? "", ...(token === undefined ? {} : { token }) }).toString(),
    });
    return {
      status: answer.status,
      location: answer.headers.get("location") ?? "",
      cookie: answer.headers.get("set-cookie")?.split(";")[0],
      page: await answer.text(),
    };
  };
  /** A browser signed in at the authorization server as `user` follows `authorizationUrl`, and back to codemux with `cookie` if it holds one. */
  const comeBack = async (authorizationUrl: string, { user, cookie }: { user?: string; cookie?: string | undefined } = {}) => {
    const answer = await fetch(authorizationUrl, { redirect: "manual", headers: user ? { cookie: `as=${user}` } : {} });
    const callback = new URL(answer.headers.get("location") as string, authorizationUrl).href;
    const page = await browse(callback, { headers: cookie ? { cookie } : {} });
    return { status: page.status, url: callback, type: page.headers.get("content-type"), text: await page.text() };
  };
  /** The whole login as `token`'s principal does it in its own browser, signed in at the authorization server as `user`. */
  const logIn = async (token: string, user?: string) => {
    const { location, cookie } = await unlock(await loginUrl(token), token);
    return comeBack(location, { ...(user ? { user } : {}), cookie });
  };
  return { core, downstream, publicUrl, browse, whoami, loginUrl, tokensOf, unlock, comeBack, logIn };
}

describe("per-principal logins through codemux's public /oauth/callback", () => {
  it("with a fixed redirectPort, runs one loopback login at a time, but as many through the public route as there are instances", async () => {
    const redirectPort = await freePort();
    const loopback = await gateway({ redirectPort, publicUrl: false });
    expect(new URL(await loopback.loginUrl(TOKENS.alice)).searchParams.get("redirect_uri")).toContain(`127.0.0.1:${redirectPort}`);
    const second = await loopback.whoami(TOKENS.bob);
    expect(JSON.stringify(second.body)).toContain('Server \\"p\\" has 1 logins in progress already');
    const open = await gateway({ redirectPort });
    const [alices, bobs] = [await open.loginUrl(TOKENS.alice), await open.loginUrl(TOKENS.bob)];
    for (const url of [alices, bobs]) expect(url).toMatch(new RegExp(`^${open.publicUrl}/oauth/login\\?login=[A-Za-z0-9_-]{43}$`));
    expect(alices).not.toBe(bobs);
    const { location } = await open.unlock(alices, TOKENS.alice);
    expect(new URL(location).searchParams.get("redirect_uri")).toBe(`${open.publicUrl}/oauth/callback`);
  });

  it("a remote principal opens the login link of its refused call, unlocks it with its token, logs in, and then calls as itself", async () => {
    const { publicUrl, whoami, loginUrl, tokensOf, unlock, comeBack } = await gateway();
    const link = await loginUrl(TOKENS.alice);
    const start = await fetch(link);
    expect(start.status).toBe(200);
    const form = await start.text();
    expect(form).toContain("Log in to p as token:alice");
    expect(form).toContain("If you are not token:alice, close this page: whoever sent you this link would act on p as you.");
    expect(form).not.toContain("<script");
    expect(start.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");

    const unlocked = await unlock(link, TOKENS.alice);
    expect(unlocked.status).toBe(303);
    expect(unlocked.cookie).toMatch(/^codemux_login_[0-9a-f]{16}=[A-Za-z0-9_-]{43}$/);
    const page = await comeBack(unlocked.location, { user: "alice", cookie: unlocked.cookie });
    expect(new URL(page.url).pathname).toBe("/oauth/callback");
    expect(page.status).toBe(200);
    expect(page.type).toBe("text/html; charset=utf-8");
    expect(page.text).toContain(
      "Logged in to p as token:alice: codemux acts there for token:alice with the account you signed in with. You can close this tab.",
    );
    expect(page.text).not.toContain("<script");

    const called = await whoami(TOKENS.alice);
    expect(called.status).toBe(200);
    expect(called.body.value).toMatch(/^client \S+ as alice$/);
    expect(await tokensOf("token:alice")).toBeDefined();
    expect(await tokensOf("token:bob")).toBeUndefined();

    // The answer is single use: the same callback URL again finds nothing, and so does the start link.
    const replayed = await fetch(page.url, { headers: { cookie: unlocked.cookie as string } });
    expect(replayed.status).toBe(400);
    expect(await replayed.text()).toContain("This login answer is unknown, expired or already used; call the tool again for a new login link");
    expect(await (await fetch(`${publicUrl}/oauth/login?login=${new URL(link).searchParams.get("login")}`)).text()).toContain(
      "This login link is unknown, expired or already used",
    );
  });

  it("with an https public URL, codemux serves its client ID metadata document and its logins use it as their client id where the server takes them", async () => {
    const publicUrl = "https://codemux.test";
    const documentUrl = `${publicUrl}/oauth/client-metadata.json`;
    const { downstream, browse, whoami, logIn } = await gateway({
      publicUrl,
      downstream: { metadataDocuments: { [documentUrl]: { client_name: "codemux", redirect_uris: [`${publicUrl}/oauth/callback`] } } },
    });
    const document = await browse(documentUrl);
    expect(document.status).toBe(200);
    expect(await document.json()).toEqual({
      client_id: documentUrl,
      client_name: "codemux",
      client_uri: publicUrl,
      redirect_uris: [`${publicUrl}/oauth/callback`],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "web",
    });
    // Only the operator's own login (a loopback one, with no public URL to name) registered.
    const registered = downstream.auth.registrations.length;
    expect((await logIn(TOKENS.alice, "alice")).text).toContain("Logged in to p as token:alice");
    expect(downstream.auth.registrations).toHaveLength(registered);
    expect((await whoami(TOKENS.alice)).body.value).toBe(`client ${documentUrl} as alice`);
  });

  it("over a plain http public URL there is no document, and its logins register", async () => {
    const { publicUrl, downstream, browse, logIn } = await gateway();
    expect((await browse(`${publicUrl}/oauth/client-metadata.json`)).status).toBe(404);
    const registered = downstream.auth.registrations.length;
    expect((await logIn(TOKENS.alice, "alice")).text).toContain("Logged in to p as token:alice");
    expect(downstream.auth.registrations).toHaveLength(registered + 1);
  });

  it("checks the issuer the browser comes back with: the server's own finishes the login, another's (a mix-up) is refused", async () => {
    const { downstream, whoami, logIn, tokensOf } = await gateway({ downstream: { iss: "own" } });
    expect((await logIn(TOKENS.alice)).text).toContain("Logged in to p as token:alice");
    expect((await whoami(TOKENS.alice)).body.value).toMatch(/^client \S+$/);

    downstream.auth.options.iss = "other";
    const mixup = await logIn(TOKENS.bob);
    expect(mixup.status).toBe(502);
    expect(mixup.text).toContain(
      "The login of &#34;p&#34; was refused: the answer came from another authorization server than the one codemux sent the browser to",
    );
    expect(mixup.text).toContain("call the tool again for a new login link");
    expect(mixup.text).not.toContain("attacker.example");
    expect(await tokensOf("token:bob")).toBeUndefined();
  });

  it("an unknown state does nothing (no bearer token needed to be told so), nor does an oversized query", async () => {
    const { publicUrl, whoami, loginUrl, tokensOf } = await gateway();
    await loginUrl(TOKENS.alice);
    const unknown = await fetch(`${publicUrl}/oauth/callback?code=stolen&state=${"0".repeat(43)}`);
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("This login answer is unknown, expired or already used");
    const oversized = await fetch(`${publicUrl}/oauth/callback?code=x&state=${"a".repeat(5000)}`);
    expect(oversized.status).toBe(414);
    expect(await oversized.text()).toContain("The login answer is longer than 4096 characters, so codemux did not read it");
    expect(await tokensOf("token:alice")).toBeUndefined();
    expect((await whoami(TOKENS.alice)).status).not.toBe(200);
  });

  it("login CSRF: alice's login link opened by bob, or its authorization URL, never makes alice act as bob", async () => {
    const { whoami, loginUrl, tokensOf, unlock, comeBack } = await gateway();
    const alices = await loginUrl(TOKENS.alice);
    // Bob opens alice's link: the page says whose login it is, and bob's token (or none, or a wrong one) does not unlock it.
    const page = await (await fetch(alices)).text();
    expect(page).toContain("Log in to p as token:alice");
    const withBobs = await unlock(alices, TOKENS.bob);
    expect(withBobs.status).toBe(403);
    expect(withBobs.page).toContain("This login is token:alice&#39;s, and the token you gave is token:bob&#39;s.");
    for (const token of [undefined, "not-a-token"]) {
      const refused = await unlock(alices, token);
      expect(refused.status).toBe(401);
      expect(refused.location).toBe("");
      expect(refused.cookie).toBeUndefined();
    }
    // Another page's form (here one on another loopback port) posting alice's own token from bob's browser is refused before anything else.
    const crossSite = await unlock(alices, TOKENS.alice, "http://127.0.0.1:9");
    expect(crossSite.status).toBe(403);
    expect(crossSite.page).toContain("This form must be sent from codemux&#39;s own login page; open the login link your call gave you.");
    expect(crossSite.cookie).toBeUndefined();

    // Alice unlocks her link herself and sends bob the authorization URL: bob's browser, signed in as bob, comes back without her cookie.
    const hers = await unlock(alices, TOKENS.alice);
    const bobs = await comeBack(hers.location, { user: "bob" });
    expect(bobs.status).toBe(403);
    expect(bobs.text).toContain("This answer came back to a browser that did not start the login of token:alice to p, so codemux did not use it.");
    expect(bobs.text).toContain("If someone sent you this link, close this tab");
    // A cookie of another login is not hers either.
    const bobsOwn = await unlock(await loginUrl(TOKENS.bob), TOKENS.bob);
    expect((await comeBack(hers.location, { user: "bob", cookie: bobsOwn.cookie })).status).toBe(403);
    expect(await tokensOf("token:alice")).toBeUndefined();
    expect((await whoami(TOKENS.alice)).status).not.toBe(200);

    // Alice's own browser still finishes her login, as alice.
    expect((await comeBack(hers.location, { user: "alice", cookie: hers.cookie })).text).toContain("Logged in to p as token:alice");
    expect((await whoami(TOKENS.alice)).body.value).toMatch(/ as alice$/);
  });

  it("holds back an address after 10 wrong tokens at the login page, before looking at the next", async () => {
    const { loginUrl, unlock } = await gateway();
    const link = await loginUrl(TOKENS.alice);
    for (let i = 0; i < 10; i++) expect((await unlock(link, `wrong-${i}`)).status).toBe(401);
    const held = await unlock(link, TOKENS.alice);
    expect(held.status).toBe(429);
    expect(held.page).toMatch(/Too many wrong tokens from 127\.0\.0\.1: wait \d+ s, then try again\./);
  });

  it("a login that ended leaves its answer unknown, and an authorization server's refusal ends the login on an escaped page", async () => {
    const { core, loginUrl, tokensOf, unlock } = await gateway();
    /** Where the authorization server sends the browser back (not followed). */
    const answerOf = async (url: string) => (await fetch(url, { redirect: "manual" })).headers.get("location") as string;

    const first = await loginUrl(TOKENS.alice);
    const unlocked = await unlock(first, TOKENS.alice);
    const refusedAnswer = new URL(await answerOf(unlocked.location));
    refusedAnswer.searchParams.delete("code");
    refusedAnswer.searchParams.set("error", "access_denied");
    refusedAnswer.searchParams.set("error_description", "<script>alert(1)</script>");
    const refused = await fetch(refusedAnswer, { headers: { cookie: unlocked.cookie as string } });
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toContain("The authorization server of p refused the login: access_denied: &#60;script&#62;alert(1)&#60;/script&#62;.");
    expect(page).not.toContain("<script");
    expect((await fetch(refusedAnswer, { headers: { cookie: unlocked.cookie as string } })).status).toBe(400);
    // The refused login ended: alice's next call starts a new one.
    expect(await loginUrl(TOKENS.alice)).not.toBe(first);

    const bobs = await unlock(await loginUrl(TOKENS.bob), TOKENS.bob);
    const bobsAnswer = await answerOf(bobs.location);
    // The server leaves the config: its logins in progress end, and their answers with them.
    await core.reload(config({}));
    const late = await fetch(bobsAnswer, { headers: { cookie: bobs.cookie as string } });
    expect(late.status).toBe(400);
    expect(await late.text()).toContain("This login answer is unknown, expired or already used");
    expect(await tokensOf("token:bob")).toBeUndefined();
  });
});
