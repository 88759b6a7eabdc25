import { auth, computeScopeUnion, extractWWWAuthenticateParams, IssuerMismatchError, type FetchLike } from "@modelcontextprotocol/client";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { OAuthSettings } from "../config/types";
import type { LoginCallbackAnswer, LoginCallbacks } from "./login-callbacks";
import { refusalOf, sendLoginPage } from "./login-page";
import { FileOAuthProvider } from "./provider";
import { readAuthRecord, writeAuthRecord, type AuthRecord } from "./store";

/** The revision of the first, unauthenticated request of a login. */
const PROBE_VERSION = "2026-07-28";

export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60 * 1000;

export interface LoginOptions {
  server: string;
  url: string;
  /** The folder of login files (`authDirectory()`). */
  dir: string;
  settings?: OAuthSettings;
  /** The loopback port of the callback: the entry's `oauth.redirectPort`, else a free one. */
  port?: number;
  /** How long to wait for the browser to come back (default 5 minutes). */
  timeoutMs?: number;
  /** Shows (and may open) the authorization URL. */
  onAuthorizationUrl: (url: URL) => void | Promise<void>;
  /** Called once the callback server listens, with its URL. */
  onListening?: (redirectUrl: string) => void;
  signal?: AbortSignal;
  fetch?: FetchLike;
  /** A principal's login through codemux's public callback route instead of a loopback listener (`port` unused then). */
  callbacks?: { registry: LoginCallbacks; principal: string };
}

/**
 * Logs in to one server: the SDK discovers the authorization server, registers (or uses the configured client id),
 * builds the PKCE authorization URL with `resource`; the browser comes back to a loopback callback on 127.0.0.1
 * (or to `callbacks`, codemux's public route); the code is exchanged and the tokens stored. Resolves with the stored record.
 */
export async function loginServer(options: LoginOptions): Promise<AuthRecord> {
  const { randomBytes } = await import("node:crypto");
  const state = randomBytes(32).toString("base64url");
  const ended = new AbortController();
  // The public route forgets the state at once when the login is cancelled, not only once this function unwinds.
  const loginEnded = options.signal ? AbortSignal.any([ended.signal, options.signal]) : ended.signal;
  const callback = options.callbacks
    ? {
        redirectUrl: options.callbacks.registry.redirectUrl,
        answer: options.callbacks.registry.expect(state, { server: options.server, principal: options.callbacks.principal }, loginEnded),
        close: async () => undefined,
      }
    : await loopbackCallback(options, state);
  callback.answer.catch(() => undefined);
  const stop = loginStop(options);
  try {
    options.onListening?.(callback.redirectUrl);
    const provider = loginProvider(options, { redirectUrl: callback.redirectUrl, state });
    await provider.prepareLogin();
    // What the server itself says first, unauthenticated: where its metadata is, and the scope it wants (with what the last login had).
    const challenge = await challengeOf(options.url, options.fetch ?? fetch);
    const scope = computeScopeUnion(challenge.scope, (await readAuthRecord(options.dir, options.server))?.scope);
    const common = {
      serverUrl: options.url,
      ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
      ...(scope ? { scope } : {}),
      ...(options.fetch ? { fetchFn: options.fetch } : {}),
    };
    if ((await auth(provider, common)) !== "AUTHORIZED") {
      const answer = await Promise.race([callback.answer, stop.stopped]);
      await exchangeCode(options, { provider, common, answer });
    }
    return await recordWithScope(options, scope);
  } finally {
    stop.dispose();
    ended.abort();
    await callback.close();
  }
}

/** What ends a login before the browser comes back: its time running out, or its signal; `stopped` rejects saying which. */
function loginStop(options: LoginOptions): { stopped: Promise<never>; dispose: () => void } {
  let stop: ((error: Error) => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    stop = reject;
  });
  stopped.catch(() => undefined);
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
  const again = options.callbacks ? "call the tool again for a new login link" : `run codemux auth login ${options.server} again`;
  const timer = setTimeout(() => stop?.(new Error(`No answer from the browser within ${Math.round(timeoutMs / 1000)} s; ${again}.`)), timeoutMs);
  const onAbort = () => stop?.(new Error("The login was cancelled."));
  options.signal?.addEventListener("abort", onAbort, { once: true });
  return {
    stopped,
    dispose: () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    },
  };
}

/** The OAuth provider of this login: its tokens and client go to the login files; the browser is sent to the callback. */
function loginProvider(options: LoginOptions, login: { redirectUrl: string; state: string }): FileOAuthProvider {
  const registry = options.callbacks?.registry;
  return new FileOAuthProvider({
    server: options.server,
    url: options.url,
    dir: options.dir,
    ...(options.settings ? { settings: options.settings } : {}),
    ...(registry?.clientMetadataUrl ? { clientMetadataUrl: registry.clientMetadataUrl } : {}),
    login: {
      ...login,
      // Through codemux's public route the principal is sent to codemux's own page first, which binds its browser to this login.
      onAuthorizationUrl: registry ? (url) => options.onAuthorizationUrl(registry.startUrl(login.state, url)) : options.onAuthorizationUrl,
    },
  });
}

/** Exchanges the code the browser brought back for tokens; the callback's page says how it went. */
async function exchangeCode(
  options: LoginOptions,
  { provider, common, answer }: { provider: FileOAuthProvider; common: Parameters<typeof auth>[1]; answer: LoginCallbackAnswer },
): Promise<void> {
  const { code, iss, finished } = answer;
  try {
    const second = await auth(provider, { ...common, authorizationCode: code, ...(iss === undefined ? {} : { iss }) }).catch((error: unknown) => {
      throw IssuerMismatchError.isInstance(error) && error.kind === "authorization_response" ? issuerRefusal(options, error) : error;
    });
    if (second !== "AUTHORIZED") throw new Error(`The authorization server did not accept the login of "${options.server}".`);
    finished();
  } catch (error) {
    finished(error as Error);
    throw error;
  }
}

/** The stored record of the login, with the scope it was granted kept for the next one. */
async function recordWithScope(options: LoginOptions, scope: string | undefined): Promise<AuthRecord> {
  const record = await readAuthRecord(options.dir, options.server);
  if (!record?.tokens) throw new Error(`The login of "${options.server}" finished without tokens.`);
  if (record.scope === scope) return record;
  const stored = { ...record, ...(scope ? { scope } : {}) };
  if (!scope) delete stored.scope;
  await writeAuthRecord(options.dir, stored);
  return stored;
}

/** How long the unauthenticated first request of a login may take. */
const CHALLENGE_TIMEOUT_MS = 10_000;

/**
 * The server's challenge to an unauthenticated request (its `WWW-Authenticate` on the 401): where its protected-resource
 * metadata is and the scope it wants. The request is a 2026-07-28 `server/discover`, which no server serves before
 * authentication when it wants any (an `initialize` may be); nothing when the server does not answer 401.
 */
async function challengeOf(url: string, fetchFn: FetchLike): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": PROBE_VERSION,
    "io.modelcontextprotocol/clientInfo": { name: "codemux", version: "login" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  try {
    const response = await fetchFn(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": PROBE_VERSION,
        "mcp-method": "server/discover",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } }),
      signal: AbortSignal.timeout(CHALLENGE_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (response.status !== 401) return {};
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
    return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
  } catch {
    // Unreachable now: the discovery that follows says so in its own words.
    return {};
  }
}

/**
 * The login refused because the browser came back from another authorization server than the one codemux sent it to
 * (RFC 9207: a mix-up); the issuer it named is not shown, as an attacker may have chosen it.
 */
function issuerRefusal(options: LoginOptions, cause: IssuerMismatchError): Error {
  const again = options.callbacks ? "call the tool again for a new login link" : `run codemux auth login ${options.server} again`;
  const what =
    cause.received === undefined
      ? "the answer did not say which authorization server sent it (no iss parameter), though the server promises to"
      : "the answer came from another authorization server than the one codemux sent the browser to (its iss parameter does not match)";
  return new Error(`The login of "${options.server}" was refused: ${what}. Nothing was stored; ${again}, and if it happens again, do not use that link.`, {
    cause,
  });
}

/** A listener on 127.0.0.1 for the browser to come back to: the login's own, for `codemux auth login` on this host. */
async function loopbackCallback(
  options: LoginOptions,
  state: string,
): Promise<{ redirectUrl: string; answer: Promise<LoginCallbackAnswer>; close: () => Promise<void> }> {
  const { createServer } = await import("node:http");
  let settle: { resolve: (answer: LoginCallbackAnswer) => void; reject: (error: Error) => void } | undefined;
  const answer = new Promise<LoginCallbackAnswer>((resolve, reject) => {
    settle = { resolve, reject };
  });
  answer.catch(() => undefined);

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      sendLoginPage(response, { status: 404, title: "Not found", text: "This is codemux's login callback; nothing else is served here." });
      return;
    }
    if (url.searchParams.get("state") !== state) {
      sendLoginPage(response, {
        status: 400,
        title: "Login failed",
        text: "The answer does not belong to this login (its state does not match). Start again with codemux auth login.",
      });
      return;
    }
    const reason = refusalOf(url.searchParams);
    if (reason !== undefined) {
      sendLoginPage(response, { status: 400, title: "Login failed", text: `The authorization server refused: ${reason}. You can close this tab.` });
      settle?.reject(new Error(`The authorization server refused the login of "${options.server}": ${reason}.`));
      return;
    }
    const iss = url.searchParams.get("iss");
    // The page waits for the exchange, so that a refused answer (an issuer that does not match) does not show "Logged in".
    settle?.resolve({
      code: url.searchParams.get("code") as string,
      ...(iss === null ? {} : { iss }),
      finished: (error) =>
        sendLoginPage(
          response,
          error
            ? { status: 400, title: "Login failed", text: `${error.message} You can close this tab.` }
            : { status: 200, title: "Logged in", text: `codemux is logged in to ${options.server}. You can close this tab.` },
        ),
    });
  });
  const port = options.port ?? options.settings?.redirectPort ?? 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`Port ${port} on 127.0.0.1 is in use; free it or set another oauth.redirectPort for "${options.server}".`)
          : error,
      ),
    );
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  return {
    redirectUrl: `http://127.0.0.1:${typeof address === "object" && address ? address.port : port}/callback`,
    answer,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
