import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createOAuthMetadata, getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthServerProvider, AuthorizationParams } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";

// express is the SDK's dependency, not ours: load the copy the SDK's auth router uses.
const sdkRequire = createRequire(createRequire(import.meta.url).resolve("@modelcontextprotocol/sdk/server/auth/router.js"));
interface App {
  use: (...a: unknown[]) => void;
  all: (...a: unknown[]) => void;
  get: (...a: unknown[]) => void;
  listen: (port: number, host: string, cb: () => void) => Server;
}
const express = sdkRequire("express") as unknown as (() => App) & { json: () => unknown };

interface Grant {
  clientId: string;
  params: AuthorizationParams;
  /** Who is signed in at the authorization server in the browser that asked (its `as` cookie), if anyone. */
  user?: string;
}

interface Issued {
  clientId: string;
  user?: string;
  expiresAt: number;
  resource?: string;
  scopes: string[];
}

/** How the authorization server says who it is on the callback (RFC 9207), and which client ids it takes. */
export interface AuthorizationServerOptions {
  /** Send `iss` with the code (and advertise it): the server's own issuer, another one (a mix-up), or none though advertised. */
  iss?: "own" | "other" | "missing";
  /** Client ID metadata documents the server accepts, by URL, as it would fetch them (advertises `client_id_metadata_document_supported`). */
  metadataDocuments?: Record<string, { client_name: string; redirect_uris: string[] }>;
}

/** An authorization server that logs the user in without asking, with refresh tokens and expiry set by the test. */
class TestAuthorizationServer implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  /** The bodies of dynamic registration requests, as sent. */
  readonly registrations: Record<string, unknown>[] = [];
  issuer = "";
  readonly codes = new Map<string, Grant>();
  readonly access = new Map<string, Issued>();
  readonly refresh = new Map<string, Issued>();
  /** What the authorization requests carried, for assertions (PKCE, resource). */
  readonly authorizations: AuthorizationParams[] = [];
  refreshes = 0;
  /** The client ids its authorization and token requests named. */
  readonly clientIdsSeen = new Set<string>();

  constructor(readonly options: AuthorizationServerOptions = {}) {}

  readonly clientsStore: OAuthRegisteredClientsStore = {
    getClient: async (id) => {
      const document = this.options.metadataDocuments?.[id];
      // A URL client id is its metadata document, which a real server fetches; this one has them at hand.
      return document ? ({ client_id: id, token_endpoint_auth_method: "none", ...document } as OAuthClientInformationFull) : this.clients.get(id);
    },
    registerClient: async (client) => {
      const full = client as OAuthClientInformationFull;
      this.clients.set(full.client_id, full);
      return full;
    },
  };

  async authorize(
    client: OAuthClientInformationFull,
    params: AuthorizationParams,
    res: { redirect: (url: string) => void; req?: { headers: Record<string, string | string[] | undefined> } },
  ): Promise<void> {
    this.authorizations.push(params);
    this.clientIdsSeen.add(client.client_id);
    const code = randomUUID();
    const user = /(?:^|;\s*)as=([^;]+)/.exec(String(res.req?.headers.cookie ?? ""))?.[1];
    this.codes.set(code, { clientId: client.client_id, params, ...(user ? { user } : {}) });
    const target = new URL(params.redirectUri);
    target.searchParams.set("code", code);
    if (params.state !== undefined) target.searchParams.set("state", params.state);
    if (this.options.iss === "own") target.searchParams.set("iss", this.issuer);
    if (this.options.iss === "other") target.searchParams.set("iss", "https://attacker.example/");
    res.redirect(target.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const grant = this.codes.get(code);
    if (!grant) throw new InvalidGrantError("unknown code");
    return grant.params.codeChallenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<OAuthTokens> {
    this.clientIdsSeen.add(client.client_id);
    const grant = this.codes.get(code);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError("unknown code");
    this.codes.delete(code);
    return this.#issue({
      clientId: client.client_id,
      ...(grant.user ? { user: grant.user } : {}),
      expiresAt: 0,
      scopes: grant.params.scopes ?? [],
      ...(grant.params.resource ? { resource: grant.params.resource.href } : {}),
    });
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, token: string): Promise<OAuthTokens> {
    const issued = this.refresh.get(token);
    if (!issued || issued.clientId !== client.client_id) throw new InvalidGrantError("unknown refresh token");
    this.refresh.delete(token);
    this.refreshes += 1;
    return this.#issue(issued);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const issued = this.access.get(token);
    if (!issued || issued.expiresAt < Date.now()) throw new InvalidTokenError("expired or unknown token");
    return {
      token,
      clientId: issued.clientId,
      scopes: issued.scopes,
      expiresAt: Math.floor(issued.expiresAt / 1000),
      ...(issued.user ? { extra: { user: issued.user } } : {}),
    };
  }

  /** Every access token expires now (as a short lifetime would, without waiting). */
  expireAccessTokens(): void {
    for (const issued of this.access.values()) issued.expiresAt = 0;
  }

  /** The user's grant is revoked: refresh tokens stop working too. */
  revokeAll(): void {
    this.expireAccessTokens();
    this.refresh.clear();
  }

  #issue(base: Issued): OAuthTokens {
    const access = randomUUID();
    const refresh = randomUUID();
    const issued = { ...base, expiresAt: Date.now() + 3600_000 };
    this.access.set(access, issued);
    this.refresh.set(refresh, issued);
    return {
      access_token: access,
      token_type: "bearer",
      expires_in: 3600,
      refresh_token: refresh,
      ...(base.scopes.length ? { scope: base.scopes.join(" ") } : {}),
    };
  }
}

/** An authorization server of the fixture on its own port, and what it saw. */
export interface AuthorizationServer {
  auth: TestAuthorizationServer;
  close: () => Promise<void>;
}

export interface ProtectedServerOptions extends AuthorizationServerOptions {
  /** The authorization server the MCP server names: another one (on its own port) instead of its own at its origin. */
  authorizationServer?: AuthorizationServer;
  /** Where the protected-resource metadata is served instead of the well-known paths: found only through `WWW-Authenticate`. */
  metadataPath?: string;
  /** The scope the 401 challenge names (and every request needs). */
  scope?: string;
  /** The scope a tool call needs besides: without it the call is answered 403 `insufficient_scope` naming it. */
  toolScope?: string;
}

export interface ProtectedServer {
  /** The MCP endpoint: `<base>/mcp`. */
  url: string;
  /** The authorization server the MCP server names now. */
  auth: TestAuthorizationServer;
  /** How many tool calls carried a valid token. */
  calls: () => number;
  /** The requests for its protected-resource metadata, by path. */
  metadataRequests: string[];
  /** The metadata names `next` from now on, and only its tokens are taken (SEP-2352's migration). */
  moveTo: (next: AuthorizationServer) => void;
  close: () => Promise<void>;
}

interface Req {
  headers: Record<string, string | undefined>;
  body?: { method?: string };
  path: string;
  auth?: AuthInfo;
}
interface Res {
  status: (code: number) => Res;
  set: (name: string, value: string) => Res;
  json: (body: unknown) => void;
  on: (e: string, f: () => void) => void;
}

async function listen(app: App): Promise<{ server: Server; base: string }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const closing = (server: Server) => async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
};

/** Mounts the authorization server's routes (metadata with the 2026 revision's fields, registration, authorize, token) on `app`. */
function mountAuthorizationServer(app: App, auth: TestAuthorizationServer, { base, resourceServerUrl }: { base: string; resourceServerUrl: URL }): void {
  const options = auth.options;
  const metadata = createOAuthMetadata({ provider: auth, issuerUrl: new URL(base), scopesSupported: ["mcp"] });
  auth.issuer = metadata.issuer;
  // Served before the SDK's router, which knows neither of the 2026 revision's fields.
  app.get("/.well-known/oauth-authorization-server", (_req: unknown, res: { json: (body: unknown) => void }) =>
    res.json({
      ...metadata,
      ...(options.iss ? { authorization_response_iss_parameter_supported: true } : {}),
      ...(options.metadataDocuments ? { client_id_metadata_document_supported: true } : {}),
    }),
  );
  app.use("/register", express.json(), (req: { body: Record<string, unknown> }, _res: unknown, next: () => void) => {
    auth.registrations.push(req.body);
    next();
  });
  app.use(mcpAuthRouter({ provider: auth, issuerUrl: new URL(base), resourceServerUrl, scopesSupported: ["mcp"] }));
}

/** An authorization server alone, on its own port (an MCP server of the fixture may name it, or move to it). */
export async function startAuthorizationServer(options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const auth = new TestAuthorizationServer(options);
  const app = express();
  const { server, base } = await listen(app);
  mountAuthorizationServer(app, auth, { base, resourceServerUrl: new URL(`${base}/mcp`) });
  return { auth, close: closing(server) };
}

/**
 * One express app: the authorization server (metadata, registration, authorize, token; or another one) and an MCP server
 * at /mcp behind bearer auth, whose 401 names its metadata and `scope`, and whose tool calls may need a scope more (403).
 */
export async function startProtectedServer(options: ProtectedServerOptions = {}): Promise<ProtectedServer> {
  const app = express();
  const { server, base } = await listen(app);
  const mcpUrl = new URL(`${base}/mcp`);
  let current = options.authorizationServer?.auth ?? new TestAuthorizationServer(options);
  let calls = 0;
  const metadataRequests: string[] = [];
  const metadataUrl = options.metadataPath ? `${base}${options.metadataPath}` : getOAuthProtectedResourceMetadataUrl(mcpUrl);
  const metadata = (req: Req, res: Res) => {
    metadataRequests.push(req.path);
    res.json({ resource: mcpUrl.href, authorization_servers: [current.issuer], scopes_supported: ["mcp"] });
  };
  if (options.metadataPath) {
    app.get(options.metadataPath, metadata);
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"])
      app.get(path, (req: Req, res: Res) => {
        metadataRequests.push(req.path);
        res.status(404).json({ error: "not here" });
      });
  } else app.get("/.well-known/oauth-protected-resource/mcp", metadata);
  if (!options.authorizationServer) mountAuthorizationServer(app, current, { base, resourceServerUrl: mcpUrl });

  const challenge = (res: Res, status: number, fields: string) =>
    res
      .status(status)
      .set("WWW-Authenticate", `Bearer ${fields}resource_metadata="${metadataUrl}"`)
      .json({ error: status === 401 ? "invalid_token" : "insufficient_scope" });
  const bearer = async (req: Req, res: Res, next: () => void) => {
    const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const info = token ? await current.verifyAccessToken(token).catch(() => undefined) : undefined;
    const needed = [options.scope, req.body?.method === "tools/call" ? options.toolScope : undefined].filter((s) => s !== undefined);
    if (!info) return challenge(res, 401, options.scope ? `scope="${options.scope}", ` : "");
    const missing = needed.filter((scope) => !info.scopes.includes(scope));
    if (missing.length > 0) return challenge(res, 403, `error="insufficient_scope", scope="${missing.join(" ")}", `);
    req.auth = info;
    next();
  };
  app.all("/mcp", express.json(), bearer, async (req: Req, res: Res) => {
    const mcp = new McpServer({ name: "protected", version: "1.0.0" });
    mcp.registerTool("whoami", { description: "Says which client the token belongs to (and which user signed in for it, if one did)." }, async (extra) => {
      calls += 1;
      const user = extra.authInfo?.extra?.user;
      return { content: [{ type: "text", text: `client ${extra.authInfo?.clientId ?? "?"}${user ? ` as ${String(user)}` : ""}` }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req as never, res as never, req.body);
  });
  return {
    url: mcpUrl.href,
    get auth() {
      return current;
    },
    calls: () => calls,
    metadataRequests,
    moveTo: (next) => {
      current = next.auth;
    },
    close: closing(server),
  };
}

/** Follows the authorization URL as a browser would: the authorization server redirects to the loopback callback, which answers a page. */
export async function completeInBrowser(authorizationUrl: string): Promise<{ status: number; page: string }> {
  const answer = await fetch(authorizationUrl, { redirect: "manual" });
  const location = answer.headers.get("location");
  if (!location) throw new Error(`The authorization server did not redirect (HTTP ${answer.status}: ${await answer.text()}).`);
  const callback = await fetch(new URL(location, authorizationUrl));
  return { status: callback.status, page: await callback.text() };
}
