import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "@codemux/test-servers";
import {
  AuthRequiredError,
  FileOAuthProvider,
  ServerPool,
  deleteAuthRecord,
  loginServer,
  parseConfig,
  principalAuthDirectory,
  readAuthRecord,
  type AuthRecord,
  type OAuthSettings,
  type ServerSpec,
} from "../src/index";
import {
  completeInBrowser,
  startAuthorizationServer,
  startProtectedServer,
  type AuthorizationServer,
  type AuthorizationServerOptions,
  type ProtectedServer,
  type ProtectedServerOptions,
} from "./auth-fixture";
import { writeAuthRecord } from "../src/auth/store";
import { freePort, httpSpec, stdioSpec, textOf } from "./helpers";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function home(): { env: NodeJS.ProcessEnv; dir: string } {
  const root = mkdtempSync(join(tmpdir(), "codemux-auth-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  return { env: { ...process.env, CODEMUX_HOME: root }, dir: join(root, "auth") };
}

async function protectedServer(options: ProtectedServerOptions = {}): Promise<ProtectedServer> {
  const server = await startProtectedServer(options);
  cleanups.push(() => server.close());
  return server;
}

async function authorizationServer(options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const server = await startAuthorizationServer(options);
  cleanups.push(() => server.close());
  return server;
}

async function startPool(specs: ServerSpec[], env: NodeJS.ProcessEnv): Promise<ServerPool> {
  const pool = new ServerPool(specs, { env, retryDelaysMs: [] });
  cleanups.push(() => pool.close());
  await pool.start();
  return pool;
}

/** The one client id a login record holds (kept per issuer). */
function clientIdOf(record: AuthRecord | undefined): string | undefined {
  const clients = Object.values(record?.clients ?? {});
  expect(clients.length).toBe(1);
  return clients[0]?.client_id;
}

/** Logs in as `codemux auth login` does, the test playing the browser. */
async function login(server: ProtectedServer, { name, dir, settings }: { name: string; dir: string; settings?: OAuthSettings }) {
  let page: { status: number; page: string } | undefined;
  const record = await loginServer({
    server: name,
    url: server.url,
    dir,
    ...(settings ? { settings } : {}),
    timeoutMs: 30_000,
    onAuthorizationUrl: async (url) => {
      // Not awaited here: the callback resolves only after onAuthorizationUrl returns.
      void completeInBrowser(url.href).then((p) => (page = p));
    },
  });
  return { record, page: () => page };
}

describe("the login store", () => {
  it("writes owner-only files in an owner-only folder, atomically", async () => {
    const { dir } = home();
    await writeAuthRecord(dir, { server: "a", url: "http://x/mcp", tokens: { access_token: "t", token_type: "bearer" } });
    await writeAuthRecord(dir, { server: "a", url: "http://x/mcp", tokens: { access_token: "u", token_type: "bearer" } });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "a.json")).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["a.json"]);
    expect((await readAuthRecord(dir, "a"))?.tokens?.access_token).toBe("u");
    expect(await deleteAuthRecord(dir, "a")).toBe(true);
    expect(await readAuthRecord(dir, "a")).toBeUndefined();
  });

  it("refuses a server name that is not a plain file name", async () => {
    const { dir } = home();
    await expect(writeAuthRecord(dir, { server: "../evil", url: "http://x/mcp" })).rejects.toThrow(/not a valid server name/);
  });
});

describe("the oauth block of a config entry", () => {
  it("is read, with variables expanded, and checked", () => {
    const config = parseConfig(
      JSON.stringify({ mcpServers: { p: { url: "https://x/mcp", oauth: { clientId: "cid", clientSecret: "${SECRET}", redirectPort: 8765 } } } }),
      { env: { SECRET: "s3" } },
    );
    expect(config.servers[0]!.transport).toMatchObject({ oauth: { clientId: "cid", clientSecret: "s3", redirectPort: 8765 } });
    expect(config.warnings).toEqual([]);
    expect(() => parseConfig(JSON.stringify({ mcpServers: { p: { url: "https://x/mcp", oauth: { redirectPort: 70000 } } } }))).toThrow(
      /mcpServers\.p\.oauth\.redirectPort/,
    );
    expect(() => parseConfig(JSON.stringify({ mcpServers: { p: { url: "https://x/mcp", oauth: { clientID: "x" } } } }))).toThrow(/mcpServers\.p\.oauth/);
  });

  it("takes a client ID metadata document URL per entry or for all (top-level oauth), https with a path only", () => {
    const url = "https://example.com/codemux/client.json";
    const config = parseConfig(
      JSON.stringify({
        oauth: { clientMetadataUrl: "${DOC}" },
        mcpServers: {
          own: { url: "https://x/mcp", oauth: { clientMetadataUrl: `${url}?own` } },
          scoped: { url: "https://y/mcp", oauth: { scope: "s" } },
          plain: { url: "https://z/mcp" },
        },
      }),
      { env: { DOC: url } },
    );
    expect(config.servers.map((s) => s.transport)).toMatchObject([
      { oauth: { clientMetadataUrl: `${url}?own` } },
      { oauth: { scope: "s", clientMetadataUrl: url } },
      { oauthDefaults: { clientMetadataUrl: url } },
    ]);
    // The top-level block does not make a plain entry an OAuth one: a 401 there may ask for an API key.
    expect(config.servers[2]!.transport).not.toHaveProperty("oauth");
    expect(() => parseConfig(JSON.stringify({ oauth: { clientMetadataUrl: "http://example.com/c.json" }, mcpServers: {} }))).toThrow(
      "Invalid config config: oauth.clientMetadataUrl: must be an https URL with a path",
    );
    expect(() => parseConfig(JSON.stringify({ mcpServers: { p: { url: "https://x/mcp", oauth: { clientMetadataUrl: "https://example.com/" } } } }))).toThrow(
      /mcpServers\.p\.oauth\.clientMetadataUrl: must be an https URL with a path/,
    );
  });
});

describe("OAuth against a local authorization server", () => {
  it("needs login before one, works after it, refreshes an expired token, and needs login again once revoked", async () => {
    const server = await protectedServer();
    const { env, dir } = home();
    const specs = [httpSpec("p", server.url, {}, {}), stdioSpec("local")];
    specs[0]!.transport = { ...(specs[0]!.transport as { type: "http"; url: string; headers: Record<string, string> }), oauth: {} };

    const before = await startPool(specs, env);
    expect(before.status().map((s) => [s.name, s.state])).toEqual([
      ["p", "failed"],
      ["local", "ready"],
    ]);
    expect(before.status()[0]!.error).toBe("needs login (no login yet): run `codemux auth login p`");
    const refused = await before.callTool("p", "whoami", {}).catch((e: unknown) => e);
    expect((refused as Error).message).toBe('Server "p" is unavailable: needs login (no login yet): run `codemux auth login p`');
    expect(readdirSync(env.CODEMUX_HOME!)).toEqual([]);

    const { record, page } = await login(server, { name: "p", dir });
    expect(record.tokens?.refresh_token).toBeTruthy();
    expect(statSync(join(dir, "p.json")).mode & 0o777).toBe(0o600);
    const [authorization] = server.auth.authorizations;
    expect(authorization?.codeChallenge).toMatch(/^[\w-]{43}$/);
    expect(authorization?.resource?.href).toBe(server.url);
    expect(authorization?.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    await expect.poll(() => page()?.page).toMatch(/logged in to p/);

    // The pool that failed picks the login up on the next call.
    expect(textOf(await before.callTool("p", "whoami", {}))).toMatch(/^client [\w-]+$/);
    expect(server.calls()).toBe(1);

    server.auth.expireAccessTokens();
    expect(textOf(await before.callTool("p", "whoami", {}))).toMatch(/^client /);
    expect(server.auth.refreshes).toBe(1);
    const refreshed = await readAuthRecord(dir, "p");
    expect(refreshed?.tokens?.access_token).not.toBe(record.tokens?.access_token);

    server.auth.revokeAll();
    const expired = await before.callTool("p", "whoami", {}).catch((e: unknown) => e);
    expect(AuthRequiredError.isInstance(expired)).toBe(true);
    expect((expired as Error).message).toBe(
      'Server "p" is unavailable: needs login (the login expired and could not be refreshed): run `codemux auth login p`',
    );
    expect(before.status()[0]).toMatchObject({
      state: "failed",
      error: "needs login (the login expired and could not be refreshed): run `codemux auth login p`",
    });
    expect(textOf(await before.callTool("local", "echo", { text: "still here" }))).toBe("still here");
  });

  it("a logged-in server without an oauth block uses its login; logout makes it need one again", async () => {
    const server = await protectedServer();
    const { env, dir } = home();
    const unlogged = await startPool([httpSpec("p", server.url)], env);
    expect(unlogged.status()[0]!.error).toMatch(/HTTP 401.*; if it uses OAuth, run `codemux auth login p`$/);

    await login(server, { name: "p", dir });
    const pool = await startPool([httpSpec("p", server.url)], env);
    expect(pool.status()[0]!.state).toBe("ready");
    expect(textOf(await pool.callTool("p", "whoami", {}))).toMatch(/^client /);

    expect(await deleteAuthRecord(dir, "p")).toBe(true);
    const after = await startPool(
      [httpSpec("p", server.url, {}, {})].map((s) => ({ ...s, transport: { ...s.transport, oauth: {} } }) as ServerSpec),
      env,
    );
    expect(after.status()[0]!.error).toBe("needs login (no login yet): run `codemux auth login p`");
  });

  it("a connection holding old tokens does not wipe a login made meanwhile by another process", async () => {
    const server = await protectedServer();
    const { env, dir } = home();
    await login(server, { name: "p", dir });
    const pool = await startPool([httpSpec("p", server.url)], env);
    expect(textOf(await pool.callTool("p", "whoami", {}))).toMatch(/^client /);
    server.auth.revokeAll();
    await login(server, { name: "p", dir });
    // The connection's refresh token was revoked; the new login on disk is used instead of being deleted.
    expect(textOf(await pool.callTool("p", "whoami", {}))).toMatch(/^client /);
    expect((await readAuthRecord(dir, "p"))?.tokens?.access_token).toBeTruthy();
  });

  it("a callback with another state is refused; a refusal from the authorization server ends the login with its reason", async () => {
    const server = await protectedServer();
    const { dir } = home();
    let wrongState: { status: number; text: string } | undefined;
    const failed = loginServer({
      server: "p",
      url: server.url,
      dir,
      timeoutMs: 30_000,
      onAuthorizationUrl: async (url) => {
        const callback = url.searchParams.get("redirect_uri")!;
        const forged = await fetch(`${callback}?code=x&state=forged`);
        wrongState = { status: forged.status, text: await forged.text() };
        void fetch(`${callback}?error=access_denied&error_description=the+user+said+no&state=${url.searchParams.get("state")}`);
      },
    });
    await expect(failed).rejects.toThrow('The authorization server refused the login of "p": access_denied: the user said no.');
    expect(wrongState?.status).toBe(400);
    expect(wrongState?.text).toContain("its state does not match");
    expect(await readAuthRecord(dir, "p")).toMatchObject({ server: "p" });
    expect((await readAuthRecord(dir, "p"))?.tokens).toBeUndefined();
  });

  it("uses a pre-registered client id and a fixed callback port from the config instead of registering", async () => {
    const server = await protectedServer();
    const { dir } = home();
    const port = await freePort();
    await server.auth.clientsStore.registerClient!({
      client_id: "pre-registered",
      redirect_uris: [`http://127.0.0.1:${port}/callback`],
      token_endpoint_auth_method: "none",
    } as never);
    const { record } = await login(server, { name: "p", dir, settings: { clientId: "pre-registered", redirectPort: port } });
    expect([...server.auth.clients.keys()]).toEqual(["pre-registered"]);
    expect(clientIdOf(record)).toBe("pre-registered");
    expect(JSON.parse(readFileSync(join(dir, "p.json"), "utf8")).tokens.access_token).toBe(record.tokens?.access_token);
  });
});

describe("OAuth as the 2026-07-28 revision has it", () => {
  const documentUrl = "https://codemux.example.com/oauth/client.json";

  it("uses the configured client ID metadata document where the server supports them, and registers as a native app where it does not", async () => {
    const supporting = await protectedServer({
      metadataDocuments: { [documentUrl]: { client_name: "codemux", redirect_uris: ["http://127.0.0.1/callback"] } },
    });
    const other = await protectedServer();
    const { dir } = home();
    const settings = { clientMetadataUrl: documentUrl };

    const { record } = await login(supporting, { name: "cimd", dir, settings });
    expect(supporting.auth.registrations).toEqual([]);
    expect(record.clients).toEqual({ [supporting.auth.issuer]: { client_id: documentUrl, issuer: supporting.auth.issuer } });
    expect(record.tokens?.access_token).toBeTruthy();

    const registered = await login(other, { name: "dcr", dir, settings });
    expect(other.auth.registrations).toHaveLength(1);
    expect(other.auth.registrations[0]).toMatchObject({ application_type: "native", client_name: "codemux" });
    expect(clientIdOf(registered.record)).toMatch(/^[\w-]{36}$/);
  });

  it("checks the issuer on the callback: the server's own iss logs in; another's, or none where one is promised, is refused and nothing is stored", async () => {
    const { dir } = home();
    const honest = await protectedServer({ iss: "own" });
    const { record } = await login(honest, { name: "honest", dir });
    expect(record.tokens?.access_token).toBeTruthy();

    for (const [name, iss, what] of [
      ["mixup", "other", "its iss parameter does not match"],
      ["silent", "missing", "no iss parameter"],
    ] as const) {
      const server = await protectedServer({ iss });
      let page: { status: number; page: string } | undefined;
      const failed = loginServer({
        server: name,
        url: server.url,
        dir,
        timeoutMs: 30_000,
        onAuthorizationUrl: (url) => void completeInBrowser(url.href).then((p) => (page = p)),
      });
      await expect(failed).rejects.toThrow(`The login of "${name}" was refused: `);
      await expect(failed).rejects.toThrow(what);
      await expect.poll(() => page?.status).toBe(400);
      expect(page?.page).toContain("Login failed");
      expect(page?.page).not.toContain("attacker.example");
      // The code was never redeemed: the authorization server issued no token.
      expect(server.auth.access.size).toBe(0);
      expect((await readAuthRecord(dir, name))?.tokens).toBeUndefined();
    }
  });

  it("keeps the client of each authorization server under its issuer: one server's registration is never offered to another", async () => {
    const { dir } = home();
    const provider = new FileOAuthProvider({
      server: "p",
      url: "https://x/mcp",
      dir,
      login: { redirectUrl: "http://127.0.0.1:1/callback", state: "s", onAuthorizationUrl: () => undefined },
    });
    await provider.saveClientInformation({ client_id: "at-a" }, { issuer: "https://a.example/" });
    await provider.saveClientInformation({ client_id: "at-b" }, { issuer: "https://b.example/" });
    const reread = new FileOAuthProvider({ server: "p", url: "https://x/mcp", dir });
    expect((await reread.clientInformation({ issuer: "https://a.example/" }))?.client_id).toBe("at-a");
    expect((await reread.clientInformation({ issuer: "https://b.example/" }))?.client_id).toBe("at-b");
    // Connecting, there is no client at a third: the server moved, and only a login registers codemux there.
    await expect(reread.clientInformation({ issuer: "https://c.example/" })).rejects.toThrow(
      'Server "p" is unavailable: needs login (it moved to another authorization server, https://c.example/): run `codemux auth login p`',
    );
  });
});

describe("OAuth as the conformance referee checks it", () => {
  it("asks the server first, unauthenticated: its metadata is found where its WWW-Authenticate says, and the scope it names is asked for", async () => {
    const as = await authorizationServer();
    const server = await protectedServer({ authorizationServer: as, metadataPath: "/custom/metadata.json", scope: "files:read" });
    const { env, dir } = home();
    const { record } = await login(server, { name: "p", dir });
    // Only where the challenge said: the well-known paths have nothing, and the MCP server's origin has no authorization server.
    expect(server.metadataRequests).toEqual(["/custom/metadata.json"]);
    expect(as.auth.authorizations.map((a) => a.scopes)).toEqual([["files:read"]]);
    expect(record.scope).toBe("files:read");
    const pool = await startPool([httpSpec("p", server.url)], env);
    expect(textOf(await pool.callTool("p", "whoami", {}))).toMatch(/^client /);
  });

  it("a 403 insufficient_scope says the server asks for more access, and the next login asks for what the login had and what it challenged", async () => {
    const server = await protectedServer({ scope: "files:read", toolScope: "files:write" });
    const { env, dir } = home();
    await login(server, { name: "p", dir });
    const pool = await startPool([httpSpec("p", server.url)], env);
    expect(pool.status()[0]!.state).toBe("ready");

    const refused = await pool.callTool("p", "whoami", {}).catch((e: unknown) => e);
    expect(AuthRequiredError.isInstance(refused)).toBe(true);
    const reason =
      "needs login (it asks for more access than the login gave: scope files:write): run `codemux auth login p`, which asks for scope files:read files:write";
    expect((refused as Error).message).toBe(`Server "p" is unavailable: ${reason}`);
    expect(pool.status()[0]).toMatchObject({ state: "failed", error: reason });
    expect(server.calls()).toBe(0);

    await login(server, { name: "p", dir });
    expect(server.auth.authorizations.map((a) => a.scopes)).toEqual([["files:read"], ["files:read", "files:write"]]);
    // The login is picked up with no call: the server connects as soon as it is stored.
    await until(() => pool.status()[0]!.state === "ready");
    expect(textOf(await pool.callTool("p", "whoami", {}))).toMatch(/^client /);
  });

  it("a server whose metadata moves to another authorization server needs a login there, which registers codemux anew: the first one's client id never reaches it", async () => {
    const [first, second] = [await authorizationServer(), await authorizationServer()];
    const server = await protectedServer({ authorizationServer: first });
    const { env, dir } = home();
    const firstId = clientIdOf((await login(server, { name: "p", dir })).record);
    const pool = await startPool([httpSpec("p", server.url)], env);
    expect(textOf(await pool.callTool("p", "whoami", {}))).toBe(`client ${firstId}`);

    server.moveTo(second);
    const refused = await pool.callTool("p", "whoami", {}).catch((e: unknown) => e);
    expect((refused as Error).message).toBe(
      `Server "p" is unavailable: needs login (it moved to another authorization server, ${second.auth.issuer}): run \`codemux auth login p\``,
    );
    // The connection registered nowhere, and sent the second server nothing of the first's.
    expect(second.auth.registrations).toEqual([]);

    const { record } = await login(server, { name: "p", dir });
    expect(second.auth.registrations).toHaveLength(1);
    const secondId = record.clients?.[second.auth.issuer]?.client_id;
    expect(secondId).toBeTruthy();
    expect([...second.auth.clientIdsSeen]).toEqual([secondId]);
    await until(() => pool.status()[0]!.state === "ready");
    expect(textOf(await pool.callTool("p", "whoami", {}))).toBe(`client ${secondId}`);
  });

  it("a login discovers afresh: a server that moved since the last login, with nothing connected meanwhile, is logged in to at its new authorization server", async () => {
    const [first, second] = [await authorizationServer(), await authorizationServer()];
    const server = await protectedServer({ authorizationServer: first });
    const { dir } = home();
    await login(server, { name: "p", dir });
    server.moveTo(second);
    const { record } = await login(server, { name: "p", dir });
    expect(second.auth.registrations).toHaveLength(1);
    expect(first.auth.authorizations).toHaveLength(1);
    expect(Object.keys(record.clients ?? {})).toEqual([second.auth.issuer]);
  });
});

/** Two principals, each logging in to one downstream server as itself, against a local authorization server. */
const alice = { id: "alice-1", principal: "token:alice" };
const bob = { id: "bob-1", principal: "token:bob" };
const carol = { id: "carol-1", principal: "token:carol" };

/** The call's refusal: it must be "needs login" with a URL to open; the test then plays the principal's browser on it. */
async function logInThroughRefusal(pool: ServerPool, session: { id: string; principal: string }, dir: string): Promise<string> {
  const refused = await pool.callTool("p", "whoami", {}, { session }).catch((error: unknown) => error);
  expect(AuthRequiredError.isInstance(refused)).toBe(true);
  const message = (refused as Error).message;
  expect(message).toMatch(
    new RegExp(
      `^Server "p" is unavailable: needs login \\(${session.principal} has no login of its own to it, or it expired\\): open http://\\S+ in a browser`,
    ),
  );
  const url = /open (\S+) in a browser/.exec(message)?.[1] as string;
  expect(new URL(url).searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  expect((await completeInBrowser(url)).page).toMatch(/logged in to p/);
  const own = principalAuthDirectory(dir, session.principal);
  await until(async () => (await readAuthRecord(own, "p"))?.tokens !== undefined);
  return textOf(await pool.callTool("p", "whoami", {}, { session }));
}

describe("credentials per principal", () => {
  it("each principal logs in to an OAuth server itself and acts as itself; none is given the operator's or another's login", async () => {
    const server = await protectedServer();
    const { env, dir } = home();
    // The operator's own login (codemux auth login p) lists the tools; it never serves a principal's call.
    const operator = await loginServer({
      server: "p",
      url: server.url,
      dir,
      timeoutMs: 30_000,
      onAuthorizationUrl: (url) => void completeInBrowser(url.href),
    });
    const pool = await startPool([httpSpec("p", server.url, { credentials: "per-principal", isolation: "principal" })], env);
    expect(pool.status()[0]).toMatchObject({ state: "ready", instances: 0 });
    expect(pool.tools()[0]?.tools.map((t) => t.name)).toEqual(["whoami"]);

    const asAlice = await logInThroughRefusal(pool, alice, dir);
    // Reaching bob's instance for resources or prompts says the same; the login it starts is the one his call then gets.
    await expect(pool.client("p", bob)).rejects.toThrow(/needs login \(token:bob has no login of its own to it, or it expired\): open http/);
    const asBob = await logInThroughRefusal(pool, bob, dir);
    const clientOf = (answer: string) => /^client (\S+)$/.exec(answer)?.[1];
    const ids = [clientOf(asAlice), clientOf(asBob), clientIdOf(operator)];
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(3);
    expect(textOf(await pool.callTool("p", "whoami", {}, { session: alice }))).toBe(asAlice);

    // Each principal's tokens are in its own owner-only file; the operator's are untouched.
    const aliceFile = join(principalAuthDirectory(dir, alice.principal), "p.json");
    expect(statSync(aliceFile).mode & 0o777).toBe(0o600);
    expect((await readAuthRecord(dir, "p"))?.tokens?.access_token).toBe(operator.tokens?.access_token);
    const [aliceTokens, bobTokens] = await Promise.all(
      [alice, bob].map(async (s) => (await readAuthRecord(principalAuthDirectory(dir, s.principal), "p"))?.tokens),
    );
    expect(aliceTokens?.access_token).not.toBe(bobTokens?.access_token);
  });

  it("a stdio server gets each principal's own env, and a principal without any is refused, never run with another's", async () => {
    const { env } = home();
    const spec = stdioSpec("k", [], {
      credentials: "per-principal",
      isolation: "principal",
      perPrincipal: { "token:alice": { env: { API_KEY: "alice-key" } }, "token:bob": { env: { API_KEY: "bob-key" } } },
    });
    const pool = await startPool([spec], env);
    const key = async (session: { id: string; principal: string }) =>
      JSON.parse(textOf(await pool.callTool("k", "env", { name: "API_KEY" }, { session }))) as { value: string | null };
    expect(await key(alice)).toEqual({ value: "alice-key" });
    expect(await key(bob)).toEqual({ value: "bob-key" });
    const refused = await key(carol).catch((error: unknown) => error);
    expect(AuthRequiredError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toBe(
      'Server "k" is unavailable: needs login (token:carol has no credentials of its own for it): the operator adds them to its entry under "perPrincipal": { "token:carol": { "env": { ... } } }',
    );
    expect(pool.status()[0]?.instances).toBe(2);
  });
});
