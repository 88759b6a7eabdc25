import { hasScope } from "@codemux/core";
import { readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { resolve } from "node:path";
import { HeldBackError, HttpError, TokenConfigError } from "../errors";
import { reloadOnChange, type FileReloader } from "../file-watch";
import type { LogSink } from "../log";
import { ANONYMOUS_PRINCIPAL, TokenSet, parseTokenFile, tokenPrincipal, type TokenMatch, type TokenSpec } from "../tokens";
import type { FailureLimit } from "./failure-limit";
import type { Identity } from "./identity";
import { BearerError, OAuthVerifier, type OAuthOptions } from "./oauth";

export interface AuthenticatorOptions {
  tokens: TokenSpec[];
  tokenFile: string | undefined;
  tokenFilePollMs: number;
  /** The resource codemux is (its public base URL), when OAuth is on. */
  publicUrl: string | undefined;
  oauth: (OAuthOptions & { audience: string[] }) | undefined;
  allowQueryToken: boolean;
  log: LogSink;
  /** Principals whose token was removed or changed by a reload of the token file: their sessions must end. */
  onRevoked: (principals: string[]) => void;
  /** Failed tokens per client address, shared with the admin page's sign-in form. */
  failures: FailureLimit;
  now?: () => number;
}

/** A token file larger than this is refused: a thousand tokens fit in far less. */
const MAX_TOKEN_FILE_BYTES = 1024 * 1024;

/** Where the protected-resource metadata of a path is (RFC 9728 §3.1): `/mcp` has its own, the rest share the root one. */
export const METADATA_PATH = "/.well-known/oauth-protected-resource";

/** What `authenticate` proves: the identity, and the token when it came in the query string (`?apikey=`). */
export interface Authenticated {
  identity: Identity;
  queryToken: string | undefined;
}

/**
 * Who a request is: a static token (from the flags, the environment or the token file, which is
 * re-read when it changes), an OAuth access token of the configured authorization server, or
 * `anonymous` when neither is configured.
 */
export class Authenticator {
  readonly #options: AuthenticatorOptions;
  #tokens: TokenSet;
  readonly #oauth: OAuthVerifier | undefined;
  readonly #reloader: FileReloader | undefined;
  readonly #now: () => number;
  /** Once any token was in force, auth stays on: a token file emptied by a reload locks everyone out, it never opens the server. */
  #required: boolean;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#tokens = new TokenSet([...options.tokens, ...(options.tokenFile ? readTokenFile(options.tokenFile) : [])]);
    this.#oauth = options.oauth ? new OAuthVerifier(options.oauth) : undefined;
    this.#required = this.#tokens.size > 0 || this.#oauth !== undefined;
    if (options.tokenFile) {
      const file = resolve(options.tokenFile);
      const log = (level: string, msg: string, fields: Record<string, unknown>) => options.log({ time: new Date().toISOString(), level, msg, file, ...fields });
      // The folder's event and the poll may both report one edit: a refused text is logged once, not again until it changes.
      let refused: string | undefined;
      this.#reloader = reloadOnChange({
        file,
        debounceMs: 100,
        pollMs: options.tokenFilePollMs,
        onError: (error) => log("warn", "token file watcher failed; edits are picked up by polling only", { error }),
        apply: async (text) => {
          if (text === refused) return false;
          try {
            if (text.trim() === "") throw new TokenConfigError(`${file} is empty (being written?); to revoke every token, write [] instead.`);
            const specs = parseTokenFile(checkedTokenFile(text, file), file);
            const next = new TokenSet([...options.tokens, ...specs]);
            const revoked = this.#tokens.changedIn(next);
            this.#tokens = next;
            this.#required ||= next.size > 0;
            refused = undefined;
            log("info", "token file reloaded", { tokens: next.size, revoked: revoked.length });
            if (revoked.length) options.onRevoked(revoked.map(tokenPrincipal));
            return true;
          } catch (error) {
            refused = text;
            log("warn", "token file not reloaded; the last good tokens stay in force", { error: (error as Error).message.slice(0, 500) });
            return false;
          }
        },
      });
    }
  }

  /** Whether requests must authenticate (some token, or OAuth); without it every caller is `anonymous`. */
  get required(): boolean {
    return this.#required;
  }

  get tokenNames(): string[] {
    return this.#tokens.names;
  }

  /** Reads the token file now (a test, or a signal) instead of waiting for its change to be seen. */
  reloadTokens(): Promise<void> {
    return this.#reloader?.reloadNow() ?? Promise.resolve();
  }

  close(): void {
    this.#reloader?.close();
  }

  /**
   * The identity of a request to `path` from the client address `client`; throws the 401/403/503 to answer with its
   * `WWW-Authenticate`, or the 429 of an address held back for too many failed tokens (its token is not checked then).
   * A static token is answered at once, without a promise (it is every call's first step); an OAuth access token is
   * checked asynchronously.
   */
  authenticate(req: IncomingMessage, target: { url: URL; path: string; client: string }): Authenticated | Promise<Authenticated> {
    const { url, path, client } = target;
    if (!this.required) return { identity: { principal: ANONYMOUS_PRINCIPAL }, queryToken: undefined };
    const credential = this.credentialOf(req, url);
    if (credential === undefined)
      throw this.#unauthorized(path, { message: "A valid token is required: send Authorization: Bearer TOKEN (or X-API-Key: TOKEN)." });
    const waitMs = this.#options.failures.waitMs(client);
    if (waitMs > 0) throw new HeldBackError(client, Math.ceil(waitMs / 1000));
    // An access token goes only in the Authorization header (RFC 6750 §2.1): never logged as a query string.
    const queryToken = credential.fromQuery ? credential.token : undefined;
    const failed = (error: unknown): never => {
      if (HttpError.isInstance(error) && error.code === "UNAUTHORIZED") this.#options.failures.failed(client, credential.token);
      throw error;
    };
    let identity: Identity | Promise<Identity>;
    try {
      identity = this.#identify(credential.token, path, { oauth: credential.bearer });
    } catch (error) {
      return failed(error);
    }
    return identity instanceof Promise ? identity.then((proved) => ({ identity: proved, queryToken }), failed) : { identity, queryToken };
  }

  /** The credential a request presents: a bearer token, else `X-API-Key`, else `?apikey=` where allowed; undefined for none. */
  credentialOf(req: IncomingMessage, url: URL): { token: string; bearer: boolean; fromQuery: boolean } | undefined {
    const authorization = req.headers.authorization;
    const bearer = typeof authorization === "string" ? /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
    if (bearer !== undefined) return { token: bearer, bearer: true, fromQuery: false };
    const header = req.headers["x-api-key"];
    if (typeof header === "string") return { token: header.trim(), bearer: false, fromQuery: false };
    const query = this.#options.allowQueryToken ? url.searchParams.get("apikey") : null;
    return query === null ? undefined : { token: query, bearer: false, fromQuery: true };
  }

  /**
   * The identity of a presented token (a static one, or with `oauth` an OAuth access token); throws the 401
   * to answer with. The admin page's sign-in checks its token here, as every request's is.
   */
  async identify(presented: string, path: string, options: { oauth: boolean } = { oauth: true }): Promise<Identity> {
    return this.#identify(presented, path, options);
  }

  /** `identify`, with a static token's identity (or its 401) given at once and only an OAuth token's as a promise. */
  #identify(presented: string, path: string, options: { oauth: boolean }): Identity | Promise<Identity> {
    const match = this.#tokens.verify(presented);
    if (match) {
      if (match.expiresAt !== undefined && match.expiresAt <= this.#now()) {
        throw this.#unauthorized(path, {
          error: "invalid_token",
          message: `Token "${match.name}" expired at ${new Date(match.expiresAt).toISOString()}; ask for a new one (its "expiresAt" in the token file).`,
        });
      }
      const { name: _, principal, ...rest } = match;
      return { principal, ...rest };
    }
    if (this.#oauth && options.oauth && OAuthVerifier.looksLikeJwt(presented)) {
      return this.#oauth.verify(presented).catch((error: unknown) => {
        if (error instanceof BearerError) throw this.#unauthorized(path, { error: error.oauthError, message: error.message, scope: error.scope });
        throw error;
      });
    }
    throw this.#unauthorized(path, { error: "invalid_token", message: "The token is not valid: send Authorization: Bearer TOKEN with a current token." });
  }

  /** The holders of the static tokens in force (never the tokens). */
  get holders(): TokenMatch[] {
    return this.#tokens.holders;
  }

  /** A 403 unless the identity holds `scope` (see `hasScope`). */
  requireScope(request: { identity: Identity; path: string }, scope: string, what: string): void {
    const { identity, path } = request;
    if (hasScope(identity, scope)) return;
    throw this.#unauthorized(path, {
      error: "insufficient_scope",
      message: `${what} needs the "${scope}" scope, which ${identity.principal} does not hold (it holds ${identity.scopes?.length ? identity.scopes.join(", ") : "none"}); grant it in the token file ("scopes") or at the authorization server.`,
      scope,
    });
  }

  /** The URL of the metadata describing `path`'s protected resource. */
  metadataUrl(path: string): string | undefined {
    const base = this.#options.publicUrl;
    if (!base || !this.#oauth) return undefined;
    return path === "/mcp" ? `${base}${METADATA_PATH}/mcp` : `${base}${METADATA_PATH}`;
  }

  /** 401 (or 403 for a scope) with `WWW-Authenticate` pointing at the resource metadata when OAuth is on. */
  #unauthorized(path: string, refusal: { error?: "invalid_token" | "insufficient_scope"; message: string; scope?: string | undefined }): HttpError {
    const { error, message, scope } = refusal;
    const metadata = this.metadataUrl(path);
    const params = [
      metadata ? `resource_metadata="${metadata}"` : 'realm="codemux"',
      ...(error ? [`error="${error}"`, `error_description="${message.replace(/["\\]/g, "'").slice(0, 200)}"`] : []),
      ...(scope ? [`scope="${scope}"`] : []),
    ];
    const forbidden = error === "insufficient_scope";
    return new HttpError(forbidden ? "FORBIDDEN" : "UNAUTHORIZED", message, {
      // Closed after a 401: an unauthenticated client does not keep a connection to try again on.
      headers: { "www-authenticate": `Bearer ${params.join(", ")}`, ...(forbidden ? {} : { connection: "close" }) },
    });
  }
}

function readTokenFile(file: string): TokenSpec[] {
  let text: string;
  try {
    // Once, at start, before serving: the re-reads after it are asynchronous.
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new TokenConfigError(
      `Cannot read the token file ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a readable file of name:token lines or JSON.`,
    );
  }
  return parseTokenFile(checkedTokenFile(text, file), file);
}

/** The file's text if it is one to apply: a blank file is an editor mid-write (`[]` revokes every token), a huge one a mistake. */
function checkedTokenFile(text: string, file: string): string {
  if (text.length > MAX_TOKEN_FILE_BYTES)
    throw new TokenConfigError(`${file} is larger than ${MAX_TOKEN_FILE_BYTES} bytes; a token file holds at most 1000 tokens.`);
  return text;
}
