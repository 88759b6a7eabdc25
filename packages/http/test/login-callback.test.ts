import { Codemux } from "@codemux/server";
import { loginServer, principalAuthDirectory, readAuthRecord } from "@codemux/pool";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { completeInBrowser, startProtectedServer } from "../../pool/test/auth-fixture";
import { freePort } from "../../pool/test/helpers";
import { CodemuxHttpServer } from "../src/index";
import { config, restAs, TOKENS } from "./helpers";

/**
 * Per-principal downstream logins finished by a REMOTE browser: codemux serves with `publicUrl` (its own URL here),
 * so the authorization server sends the browser back to codemux's /oauth/callback, not to a loopback on the host.
 * The real OAuth authorization server and protected MCP server of the pool's tests; the test's fetch plays the browser.
 */
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(options: { redirectPort?: number; publicUrl?: boolean; iss?: "own" } = {}) {
  const root = mkdtempSync(join(tmpdir(), "codemux-callback-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const env = { ...process.env, CODEMUX_HOME: root };
  const dir = join(root, "auth");
  const downstream = await startProtectedServer(options.iss ? { iss: options.iss } : {});
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
  const publicUrl = `http://127.0.0.1:${port}`;
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
  const rest = restAs(publicUrl);
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
  return { core, downstream, publicUrl, whoami, loginUrl, tokensOf };
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
    for (const url of [alices, bobs]) expect(new URL(url).searchParams.get("redirect_uri")).toBe(`${open.publicUrl}/oauth/callback`);
    expect(alices).not.toBe(bobs);
  });

  it("a remote principal follows the login URL of its refused call, codemux finishes the login, and it then calls as itself", async () => {
    const { publicUrl, whoami, loginUrl, tokensOf } = await gateway();
    const url = await loginUrl(TOKENS.alice);
    expect(new URL(url).searchParams.get("redirect_uri")).toBe(`${publicUrl}/oauth/callback`);

    const page = await fetch(url);
    expect(new URL(page.url).pathname).toBe("/oauth/callback");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const text = await page.text();
    expect(text).toContain("Logged in to p; you can close this tab.");
    expect(text).not.toContain("<script");

    const called = await whoami(TOKENS.alice);
    expect(called.status).toBe(200);
    expect(called.body.value).toMatch(/^client \S+$/);
    expect(await tokensOf("token:alice")).toBeDefined();
    expect(await tokensOf("token:bob")).toBeUndefined();

    // The answer is single use: the same callback URL again finds nothing.
    const replayed = await fetch(page.url);
    expect(replayed.status).toBe(400);
    expect(await replayed.text()).toContain("This login answer is unknown, expired or already used; call the tool again for a new login link");
  });

  it("checks the issuer the browser comes back with: the server's own finishes the login, another's (a mix-up) is refused", async () => {
    const { downstream, whoami, loginUrl, tokensOf } = await gateway({ iss: "own" });
    const own = await fetch(await loginUrl(TOKENS.alice));
    expect(await own.text()).toContain("Logged in to p; you can close this tab.");
    expect((await whoami(TOKENS.alice)).body.value).toMatch(/^client \S+$/);

    downstream.auth.options.iss = "other";
    const mixup = await fetch(await loginUrl(TOKENS.bob));
    expect(mixup.status).toBe(502);
    const text = await mixup.text();
    expect(text).toContain("The login of &#34;p&#34; was refused: the answer came from another authorization server than the one codemux sent the browser to");
    expect(text).toContain("call the tool again for a new login link");
    expect(text).not.toContain("attacker.example");
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

  it("the state binds the principal: whoever's browser brings alice's answer back, the login is alice's, never bob's", async () => {
    const { whoami, loginUrl, tokensOf } = await gateway();
    const alices = await loginUrl(TOKENS.alice);
    await loginUrl(TOKENS.bob);
    // Bob (or anyone) opens alice's link: the tokens go to alice's folder, and bob still has no login of his own.
    expect((await fetch(alices)).status).toBe(200);
    expect(await tokensOf("token:alice")).toBeDefined();
    expect(await tokensOf("token:bob")).toBeUndefined();
    const bob = await whoami(TOKENS.bob);
    expect(bob.status).not.toBe(200);
    expect(JSON.stringify(bob.body)).toContain("token:bob has no login of its own to it");
    expect((await whoami(TOKENS.alice)).status).toBe(200);
  });

  it("a login that ended leaves its answer unknown, and an authorization server's refusal ends the login on an escaped page", async () => {
    const { core, loginUrl, tokensOf } = await gateway();
    /** Where the authorization server sends the browser back (not followed). */
    const answerOf = async (url: string) => (await fetch(url, { redirect: "manual" })).headers.get("location") as string;

    const first = await loginUrl(TOKENS.alice);
    const refusedAnswer = new URL(await answerOf(first));
    refusedAnswer.searchParams.delete("code");
    refusedAnswer.searchParams.set("error", "access_denied");
    refusedAnswer.searchParams.set("error_description", "<script>alert(1)</script>");
    const refused = await fetch(refusedAnswer);
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toContain("The authorization server of p refused the login: access_denied: &#60;script&#62;alert(1)&#60;/script&#62;.");
    expect(page).not.toContain("<script");
    expect((await fetch(refusedAnswer)).status).toBe(400);
    // The refused login ended: alice's next call starts a new one.
    expect(await loginUrl(TOKENS.alice)).not.toBe(first);

    const bobs = await answerOf(await loginUrl(TOKENS.bob));
    // The server leaves the config: its logins in progress end, and their answers with them.
    await core.reload(config({}));
    const late = await fetch(bobs);
    expect(late.status).toBe(400);
    expect(await late.text()).toContain("This login answer is unknown, expired or already used");
    expect(await tokensOf("token:bob")).toBeUndefined();
  });
});
