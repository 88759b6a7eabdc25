import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider from "oidc-provider";

/** Where the authorization server sends the browser back with the code. */
export const REDIRECT_URI = "http://127.0.0.1:1/callback";
export const CLIENT_ID = "codemux-test-client";

export interface AuthorizationServer {
  issuer: string;
  /** The private signing key it uses (tests sign expired tokens with it). */
  signingKey: JWK;
  /** The user the next login signs in as, and the groups put in their access tokens. */
  user: { id: string; groups: string[] };
  close(): Promise<void>;
}

/**
 * A real OAuth 2.1 authorization server (oidc-provider) on a loopback port: resource indicators on,
 * issuing JWT access tokens for any resource asked for, with the scopes mcp, admin and metrics.
 * Its login and consent pages answer at once, as the user `user.id` who consents to what is asked.
 */
export async function startAuthorizationServer(): Promise<AuthorizationServer> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: "as-key-1", alg: "RS256", use: "sig" };
  const user = { id: "alice@example.com", groups: ["eng"] };
  let provider: Provider | undefined;
  const server: Server = createServer((req, res) => {
    if (!provider) return res.writeHead(503).end();
    if (req.url?.startsWith("/interaction/")) return void interact(provider, user, { req, res }).catch((error: Error) => res.writeHead(500).end(error.message));
    return provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: "none",
        application_type: "native",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [signingKey] },
    scopes: ["openid", "offline_access", "mcp", "admin", "metrics"],
    cookies: { keys: [randomBytes(16).toString("hex")] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, RefreshToken: 600, Session: 600 },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    extraTokenClaims: () => ({ groups: user.groups }),
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: "mcp admin metrics",
          audience: resource,
          accessTokenFormat: "jwt",
          accessTokenTTL: 600,
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
  });
  return {
    issuer,
    signingKey,
    user,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The login and consent pages: sign in as `user`, and grant exactly the scopes and resources asked for. */
async function interact(
  provider: Provider,
  user: { id: string },
  exchange: { req: Parameters<Provider["interactionDetails"]>[0]; res: Parameters<Provider["interactionDetails"]>[1] },
) {
  const { req, res } = exchange;
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === "login") return provider.interactionFinished(req, res, { login: { accountId: user.id } }, { mergeWithLastSubmission: false });
  const grant = details.grantId
    ? ((await provider.Grant.find(details.grantId)) as InstanceType<Provider["Grant"]>)
    : new provider.Grant({ accountId: details.session?.accountId as string, clientId: details.params.client_id as string });
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(" "));
  const grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

/** A browser: follows redirects with its cookies until the authorization server sends it to the client's redirect URI; returns that URL. */
export async function browse(start: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = new URL(start);
  for (let hop = 0; hop < 20; hop++) {
    if (url.href.startsWith(REDIRECT_URI)) return url;
    const response = await fetch(url, { redirect: "manual", headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(";")[0] as string;
      const eq = pair.indexOf("=");
      if (eq > 0 && pair.slice(eq + 1)) jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      else if (eq > 0) jar.delete(pair.slice(0, eq));
    }
    const location = response.headers.get("location");
    if (!location) throw new Error(`the authorization flow stopped at ${url.pathname} with ${response.status}: ${(await response.text()).slice(0, 300)}`);
    await response.body?.cancel();
    url = new URL(location, url);
  }
  throw new Error("the authorization flow redirected more than 20 times");
}

/** The authorization code flow with PKCE and a resource indicator, as a client without the SDK does it; returns the access token. */
export async function authorize(as: AuthorizationServer, options: { resource: string; scope: string }): Promise<string> {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const state = randomBytes(8).toString("hex");
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    response_type: "code",
    redirect_uri: REDIRECT_URI,
    scope: options.scope,
    resource: options.resource,
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const back = await browse(`${as.issuer}/auth?${query}`);
  if (back.searchParams.get("state") !== state) throw new Error(`the authorization server answered ${back.search}`);
  const response = await fetch(`${as.issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: back.searchParams.get("code") as string,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      code_verifier: verifier,
      resource: options.resource,
    }),
  });
  const body = (await response.json()) as { access_token?: string; error_description?: string };
  if (!body.access_token) throw new Error(`no access token: ${JSON.stringify(body)}`);
  return body.access_token;
}
