import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SignJWT, UnsecuredJWT, generateKeyPair, importJWK } from "jose";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, bearer, json, serve, type Served } from "./helpers";
import { CLIENT_ID, REDIRECT_URI, authorize, browse, startAuthorizationServer, type AuthorizationServer } from "./oauth-server";

/** A free loopback port: codemux's public URL (the tokens' audience) must be known before it listens. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The MCP SDK client's OAuth provider, registered in advance with the authorization server; it remembers the URL it is sent to. */
class SignInProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  readonly redirectUrl = REDIRECT_URI;
  readonly clientMetadata: OAuthClientMetadata = { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", client_name: "codemux test" };
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: CLIENT_ID };
  }
  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
}

let as: AuthorizationServer;
let s: Served;
let publicUrl: string;
const seen: Array<{ principal: string; groups?: readonly string[]; scopes?: readonly string[] }> = [];

beforeAll(async () => {
  as = await startAuthorizationServer();
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  s = await serve({
    port,
    publicUrl,
    oauth: { issuer: as.issuer, scopesSupported: ["mcp", "admin", "metrics"], requiredScopes: ["mcp"] },
    compatRoutes: true,
    reload: async () => ({ added: [], removed: [], changed: [] }),
  });
  s.core.pipeline.use(async (ctx, next) => {
    const { principal, groups, scopes } = ctx.session;
    seen.push({ principal, ...(groups ? { groups } : {}), ...(scopes ? { scopes } : {}) });
    return next(ctx);
  });
});
afterAll(async () => {
  await s?.close();
  await as?.close();
});

const get = (path: string, token?: string) => fetch(`${publicUrl}${path}`, token ? { headers: bearer(token) } : {});

describe("codemux as an OAuth protected resource", () => {
  it("publishes its protected-resource metadata (RFC 9728), and a 401 points to it", async () => {
    expect(await json(await get("/.well-known/oauth-protected-resource"))).toEqual({
      resource: publicUrl,
      authorization_servers: [as.issuer],
      bearer_methods_supported: ["header"],
      scopes_supported: ["mcp", "admin", "metrics"],
      resource_name: "codemux",
    });
    expect(await json(await get("/.well-known/oauth-protected-resource/mcp"))).toMatchObject({ resource: `${publicUrl}/mcp` });
    const mcp = await fetch(`${publicUrl}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp"`);
    for (const path of ["/v1/tools", "/sse"]) {
      const other = await get(path);
      expect(other.status).toBe(401);
      expect(other.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${publicUrl}/.well-known/oauth-protected-resource"`);
    }
  });

  it("lets the MCP SDK client sign in (authorization code, PKCE, resource) and call tools as oauth:<issuer>#<subject>", async () => {
    const provider = new SignInProvider();
    const url = new URL(`${publicUrl}/mcp`);
    const first = new Client({ name: "oauth-client", version: "1" });
    await expect(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))).rejects.toThrow(UnauthorizedError);
    const asked = provider.authorizationUrl as URL;
    expect(asked.origin).toBe(as.issuer);
    expect(asked.searchParams.get("resource")).toBe(`${publicUrl}/mcp`);
    expect(asked.searchParams.get("code_challenge_method")).toBe("S256");
    const back = await browse(asked.href);
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await transport.finishAuth(back.searchParams.get("code") as string);
    const client = new Client({ name: "oauth-client", version: "1" });
    await client.connect(transport);
    seen.length = 0;
    const result = await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "signed in" } } });
    expect(JSON.stringify(result.content)).toContain("signed in");
    expect(seen).toEqual([{ principal: `oauth:${as.issuer}#alice@example.com`, groups: ["eng"], scopes: ["mcp", "admin", "metrics"] }]);
    await client.close();
  });

  it("serves /v1 to a token from the same flow, with its rights from its scopes", async () => {
    const token = await authorize(as, { resource: publicUrl, scope: "mcp metrics" });
    expect((await get("/v1/tools", token)).status).toBe(200);
    expect((await get("/metrics", token)).status).toBe(200);
    const reload = await fetch(`${publicUrl}/restart`, { method: "POST", headers: bearer(token) });
    expect(reload.status).toBe(403);
    expect(reload.headers.get("www-authenticate")).toMatch(
      new RegExp(`^Bearer resource_metadata="${publicUrl}/\\.well-known/oauth-protected-resource", error="insufficient_scope", .*scope="admin"$`),
    );
    expect((await json(reload)).error).toMatchObject({ code: "forbidden", message: expect.stringContaining('Reloading the config needs the "admin" scope') });
    seen.length = 0;
    await fetch(`${publicUrl}/v1/tools/m__echo/call`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: '{"text":"r"}',
    });
    expect(seen).toEqual([{ principal: `oauth:${as.issuer}#alice@example.com`, groups: ["eng"], scopes: ["mcp", "metrics"] }]);
  });

  it("keeps static tokens working beside OAuth", async () => {
    expect((await get("/v1/tools", TOKENS.alice)).status).toBe(200);
  });
});

describe("bad access tokens", () => {
  const claims = () => ({ iss: as.issuer, aud: publicUrl, sub: "mallory", scope: "mcp admin" });
  const refused = async (token: string) => {
    const response = await get("/v1/tools", token);
    return {
      status: response.status,
      header: response.headers.get("www-authenticate") ?? "",
      message: String(((await json(response)).error as { message?: string })?.message),
    };
  };

  it("refuses a token issued for another resource (audience)", async () => {
    const token = await authorize(as, { resource: "http://127.0.0.1:1/other", scope: "mcp" });
    const answer = await refused(token);
    expect(answer.status).toBe(401);
    expect(answer.header).toMatch(/error="invalid_token"/);
    expect(answer.message).toMatch(/^The access token is for another audience; codemux accepts tokens issued for/);
  });

  it("refuses an expired token signed by the issuer's own key", async () => {
    const key = await importJWK(as.signingKey, "RS256");
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT(claims())
      .setProtectedHeader({ alg: "RS256", kid: "as-key-1", typ: "at+jwt" })
      .setIssuedAt(now - 3600)
      .setExpirationTime(now - 600)
      .sign(key);
    const answer = await refused(token);
    expect(answer.status).toBe(401);
    expect(answer.message).toBe("The access token expired; get a new one (refresh it) and retry.");
  });

  it("refuses an unsigned token (alg none)", async () => {
    const token = new UnsecuredJWT(claims()).setIssuedAt().setExpirationTime("10m").encode();
    const answer = await refused(token);
    expect(answer.status).toBe(401);
    expect(answer.message).toBe("The access token is unsigned or uses an algorithm codemux does not accept.");
  });

  it("refuses a token signed by another key under the issuer's key id", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: "RS256", kid: "as-key-1" }).setIssuedAt().setExpirationTime("10m").sign(privateKey);
    const answer = await refused(token);
    expect(answer.status).toBe(401);
    expect(answer.message).toBe("The access token's signature does not match the authorization server's keys.");
  });

  it("answers a token without a required scope with 403 insufficient_scope naming it", async () => {
    const token = await authorize(as, { resource: publicUrl, scope: "metrics" });
    const answer = await refused(token);
    expect(answer.status).toBe(403);
    expect(answer.header).toMatch(/error="insufficient_scope", .*scope="mcp"$/);
    expect(answer.message).toMatch(/^The access token lacks the scope mcp, which codemux needs for every request/);
  });

  it("refuses a token from the issuer whose subject is not a string with 401 and a sentence, never a 500", async () => {
    const key = await importJWK(as.signingKey, "RS256");
    for (const [sub, kind] of [
      [{ toString: "x", valueOf: "y" }, "an object"],
      [42, "a number"],
    ] as const) {
      const token = await new SignJWT({ ...claims(), sub: sub as unknown as string })
        .setProtectedHeader({ alg: "RS256", kid: "as-key-1", typ: "at+jwt" })
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(key);
      const answer = await refused(token);
      expect(answer.status).toBe(401);
      expect(answer.header).toMatch(/error="invalid_token"/);
      expect(answer.message).toBe(`The access token's subject (sub) is ${kind}, not a string; the authorization server must issue sub as a string.`);
    }
  });

  it("refuses an oversized or malformed bearer value before any parsing", async () => {
    for (const token of [`${"a".repeat(9000)}.b.c`, "not-a-jwt-and-no-token"]) {
      const answer = await refused(token);
      expect(answer.status).toBe(401);
      expect(answer.header).toMatch(/error="invalid_token"/);
    }
  });
});

describe("an authorization server that misbehaves", () => {
  it("answers 503 naming the issuer when its metadata never comes or is too large, without holding the request", async () => {
    // One server that never answers, one that answers a metadata document of 1 MiB.
    const silent = createServer(() => undefined);
    const huge = createHttpServer((_req, res) => res.end(`{"issuer":"${"x".repeat(1024 * 1024)}"}`));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => huge.listen(0, "127.0.0.1", resolve));
    const issuers = [silent, huge].map((server) => `http://127.0.0.1:${(server.address() as { port: number }).port}`);
    try {
      for (const issuer of issuers) {
        const port = await freePort();
        const t = await serve({ port, publicUrl: `http://127.0.0.1:${port}`, oauth: { issuer, fetchTimeoutMs: 300 } });
        try {
          const token = new UnsecuredJWT({ iss: issuer, sub: "x" }).encode().replace(/\.$/, ".c2ln");
          const response = await fetch(`${t.url}/v1/tools`, { headers: bearer(token) });
          expect(response.status).toBe(503);
          expect(String(((await json(response)).error as { message?: string }).message)).toMatch(
            new RegExp(`^codemux cannot check access tokens of ${issuer}: .*Try again shortly`),
          );
        } finally {
          await t.close();
        }
      }
    } finally {
      silent.close();
      huge.closeAllConnections();
      huge.close();
    }
  });
});
