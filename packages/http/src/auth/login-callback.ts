import { refusalOf, sendLoginPage, type LoginCallbackAnswer, type LoginCallbacks } from "@codemux/pool";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "../body";
import { sendJson } from "../respond";
import { HttpError } from "../errors";
import type { FailureLimit } from "./failure-limit";
import { escapeHtml, html } from "../ui/html";
import type { Identity } from "./identity";

/** Where per-principal logins send the browser back to, on codemux's own public URL. */
export const LOGIN_CALLBACK_PATH = "/oauth/callback";
/** codemux's own page a principal's login link opens: its credentials unlock it, and it binds the browser to the login. */
export const LOGIN_START_PATH = "/oauth/login";
/** codemux's client ID metadata document (SEP-991), served where its public URL is https: authorization servers fetch it. */
export const CLIENT_METADATA_PATH = "/oauth/client-metadata.json";
/** The longest request target the route reads: a code and a state are far shorter. */
const MAX_TARGET_CHARS = 4096;
/** The start form's body: a login id and a token. */
const MAX_FORM_BYTES = 16 * 1024;
/** A bound browser's cookie lasts as long as a login may (5 minutes). */
const BINDING_MAX_AGE_S = 300;

interface PendingLogin {
  server: string;
  principal: string;
  /** The id in the link the principal was given (`/oauth/login?login=…`), never the state. */
  link?: string;
  /** Where the start page sends the browser once the principal unlocked it. */
  authorizationUrl?: URL;
  /** The secret of the cookie set in the browser that unlocked the start page: only that browser may finish the login. */
  binding?: string;
  /** Hands the code (and the `iss` that came with it) to the login; resolves once it is exchanged and stored (undefined) or with why not. */
  accept(code: string, iss: string | undefined): Promise<Error | undefined>;
  refuse(reason: string): void;
}

export interface LoginCallbackOptions {
  /** codemux's public origin (`http.publicUrl`): the redirect URI and the start links are made from it, and the start form must come from it. */
  publicUrl: string;
  /** Whether tokens are required at all; without them every caller is `anonymous`, the one principal there is. */
  authRequired: () => boolean;
  /** The identity of a presented token (`anonymous` when codemux requires none); throws the 401 when it is not valid. */
  identify: (token: string) => Promise<Identity>;
  /** The client address of a request: wrong tokens at the start form are limited per address, as at the admin page's sign-in. */
  clientAddress: (req: IncomingMessage) => string;
  /** The server's one budget of wrong tokens per client address (every route and the admin page's form share it). */
  failures: FailureLimit;
}

/**
 * A principal's downstream login through codemux's own public URL, for browsers that cannot reach a loopback
 * listener on the codemux host. The principal is given `GET /oauth/login?login=…`, not the authorization URL: that
 * page names whose login it continues, and only that principal's token unlocks it (`POST`, from this origin only),
 * which sets a cookie binding the browser to the login and sends it on to the authorization server. The browser
 * comes back to `GET /oauth/callback?code=…&state=…` (no bearer token: a browser navigates there), which does
 * nothing but for a known state (unguessable, single use, bound to the login's server and principal, gone when the
 * login ends or times out) brought back by the bound browser. So a login link sent to someone else finishes nothing.
 */
export class LoginCallbackRoute implements LoginCallbacks {
  readonly redirectUrl: string;
  readonly clientMetadataUrl: string | undefined;
  readonly #options: LoginCallbackOptions;
  readonly #origin: string;
  readonly #pending = new Map<string, PendingLogin>();
  /** The state of each start link's login. */
  readonly #links = new Map<string, string>();

  constructor(options: LoginCallbackOptions) {
    this.#options = options;
    this.#origin = new URL(options.publicUrl).origin;
    this.redirectUrl = `${options.publicUrl}${LOGIN_CALLBACK_PATH}`;
    // A client id document must be at an https URL: over plain http these logins register instead.
    this.clientMetadataUrl = options.publicUrl.startsWith("https:") ? `${options.publicUrl}${CLIENT_METADATA_PATH}` : undefined;
  }

  /** Whether `path` is one of this route's. */
  serves(path: string): boolean {
    return path === LOGIN_CALLBACK_PATH || path === LOGIN_START_PATH || (path === CLIENT_METADATA_PATH && this.clientMetadataUrl !== undefined);
  }

  /**
   * The client ID metadata document: what these logins say of codemux when they register, under the document's own URL as
   * the client id. Public, as the authorization servers that fetch it hold no token of codemux's.
   */
  #clientMetadata(res: ServerResponse): void {
    sendJson(res, 200, {
      client_id: this.clientMetadataUrl,
      client_name: "codemux",
      client_uri: this.#options.publicUrl,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "web",
    });
  }

  expect(state: string, login: { server: string; principal: string }, signal: AbortSignal): Promise<LoginCallbackAnswer> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new Error("The login was cancelled."));
      let settle: ((error?: Error) => void) | undefined;
      const outcome = new Promise<Error | undefined>((done) => {
        settle = done;
      });
      signal.addEventListener(
        "abort",
        () => {
          const link = this.#pending.get(state)?.link;
          if (link !== undefined) this.#links.delete(link);
          this.#pending.delete(state);
          settle?.(new Error("the login ended before the code was exchanged"));
          reject(new Error("The login was cancelled."));
        },
        { once: true },
      );
      this.#pending.set(state, {
        ...login,
        accept: (code, iss) => {
          resolve({ code, ...(iss === undefined ? {} : { iss }), finished: (error) => settle?.(error) });
          return outcome;
        },
        refuse: (reason) => reject(new Error(`The authorization server refused the login of "${login.server}": ${reason}.`)),
      });
    });
  }

  startUrl(state: string, authorizationUrl: URL): URL {
    const link = randomBytes(32).toString("base64url");
    const login = this.#pending.get(state);
    if (login) {
      login.link = link;
      login.authorizationUrl = authorizationUrl;
      this.#links.set(link, state);
    }
    return new URL(`${this.#origin}${LOGIN_START_PATH}?login=${link}`);
  }

  /** Answers a request to one of this route's paths (`serves`). */
  async handle(req: IncomingMessage, res: ServerResponse, { path, query }: { path: string; query: URLSearchParams }): Promise<void> {
    if ((req.url ?? "").length > MAX_TARGET_CHARS)
      return sendLoginPage(res, {
        status: 414,
        title: "Login failed",
        text: `The login answer is longer than ${MAX_TARGET_CHARS} characters, so codemux did not read it; call the tool again for a new login link.`,
      });
    if (path === CLIENT_METADATA_PATH) {
      if (req.method !== "GET") throw new HttpError("METHOD_NOT_ALLOWED", "Use GET on this path.", { headers: { allow: "GET" } });
      return this.#clientMetadata(res);
    }
    if (path === LOGIN_START_PATH) {
      if (req.method === "POST") return this.#unlock(req, res);
      if (req.method === "GET") return this.#startPage(res, query.get("login") ?? "");
      throw new HttpError("METHOD_NOT_ALLOWED", "Use GET or POST on this path.", { headers: { allow: "GET, POST" } });
    }
    if (req.method !== "GET") throw new HttpError("METHOD_NOT_ALLOWED", "Use GET on this path.", { headers: { allow: "GET" } });
    return this.#callback(req, res, query);
  }

  /** The login of a start link, or the page saying it is gone. */
  #loginOf(res: ServerResponse, link: string): { state: string; login: PendingLogin } | undefined {
    const state = this.#links.get(link);
    const login = state === undefined ? undefined : this.#pending.get(state);
    if (state !== undefined && login?.authorizationUrl) return { state, login };
    sendLoginPage(res, {
      status: 400,
      title: "Login failed",
      text: "This login link is unknown, expired or already used; call the tool again for a new login link and open it within 5 minutes.",
    });
    return undefined;
  }

  #startPage(res: ServerResponse, link: string, problem?: { status: number; text: string }): void {
    const found = this.#loginOf(res, link);
    if (!found) return;
    const { server, principal, authorizationUrl } = found.login;
    const body = html`<h1>Log in to ${server} as ${principal}</h1>
${problem ? html`<p role="alert"><strong>${problem.text}</strong></p>` : ""}
<p>This continues the login of <strong>${principal}</strong> to <strong>${server}</strong>: codemux will act on ${server} as the account you sign in with there, for ${principal} only.</p>
<p>If you are not ${principal}, close this page: whoever sent you this link would act on ${server} as you.</p>
<form method="post" action="${LOGIN_START_PATH}">
<input type="hidden" name="login" value="${link}">
${
  this.#options.authRequired()
    ? html`<p><label for="token">The codemux token of ${principal} (the one its MCP client sends)</label><br>
<input type="password" id="token" name="token" autocomplete="current-password" required autofocus></p>`
    : ""
}
<p><button type="submit">Continue to ${server}'s sign-in</button></p>
</form>`;
    res.writeHead(problem?.status ?? 200, {
      "content-type": "text/html; charset=utf-8",
      // The form posts here, and its answer redirects to the authorization server: both are allowed form targets.
      "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${(authorizationUrl as URL).origin}; frame-ancestors 'none'; base-uri 'none'`,
      "x-frame-options": "DENY",
      // A real Origin on the form's POST (no-referrer would send "Origin: null", which is refused).
      "referrer-policy": "same-origin",
      "cache-control": "no-store",
      connection: "close",
    });
    res.end(
      `<!doctype html><meta charset="utf-8"><title>codemux: log in to ${escapeHtml(server)}</title><body style="font-family:sans-serif;margin:3em">${body}</body>`,
    );
  }

  /** The start form: the principal's own token unlocks it; the browser then gets the binding cookie and goes on to the authorization server. */
  async #unlock(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Only codemux's own page may post here: another site's form would bind its visitor's browser to a login it chose.
    if (req.headers.origin !== this.#origin)
      return sendLoginPage(res, {
        status: 403,
        title: "Login refused",
        text: "This form must be sent from codemux's own login page; open the login link your call gave you.",
      });
    const address = this.#options.clientAddress(req);
    // Checked before the token is read: while an address is held back, its guesses are not even tried.
    const waitS = Math.ceil(this.#options.failures.waitMs(address) / 1000);
    if (waitS > 0) {
      res.setHeader("retry-after", String(waitS));
      return sendLoginPage(res, { status: 429, title: "Login refused", text: `Too many wrong tokens from ${address}: wait ${waitS} s, then try again.` });
    }
    const form = new URLSearchParams((await readBody(req, MAX_FORM_BYTES)).toString("utf8"));
    const link = form.get("login") ?? "";
    const found = this.#loginOf(res, link);
    if (!found) return;
    const { login } = found;
    let identity: Identity;
    try {
      identity = await this.#options.identify((form.get("token") ?? "").trim());
    } catch (error) {
      if (!HttpError.isInstance(error) || error.status !== 401) throw error;
      this.#options.failures.failed(address, form.get("token") ?? "");
      return this.#startPage(res, link, { status: 401, text: `That token is not valid here. Give the codemux token of ${login.principal}.` });
    }
    if (identity.principal !== login.principal)
      return this.#startPage(res, link, {
        status: 403,
        text: `This login is ${login.principal}'s, and the token you gave is ${identity.principal}'s. Each principal logs in from the link its own call gave it.`,
      });
    login.binding = randomBytes(32).toString("base64url");
    res.writeHead(303, {
      location: (login.authorizationUrl as URL).href,
      "set-cookie": this.#cookie(link, login.binding, BINDING_MAX_AGE_S),
      "cache-control": "no-store",
      connection: "close",
    });
    res.end();
  }

  async #callback(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    const state = query.get("state") ?? "";
    const login = this.#pending.get(state);
    if (!login)
      return sendLoginPage(res, {
        status: 400,
        title: "Login failed",
        text: "This login answer is unknown, expired or already used; call the tool again for a new login link and open it within 5 minutes.",
      });
    // Only the browser whose principal unlocked the start page finishes the login: anyone else's answer is not used.
    if (!this.#bound(req, login))
      return sendLoginPage(res, {
        status: 403,
        title: "Login refused",
        text: `This answer came back to a browser that did not start the login of ${login.principal} to ${login.server}, so codemux did not use it. A login finishes only in the browser where ${login.principal} opened codemux's login link and gave its token. If someone sent you this link, close this tab: finishing it would have let them act on ${login.server} as you.`,
      });
    // Single use: a replayed answer finds nothing, whatever becomes of this one.
    this.#pending.delete(state);
    if (login.link !== undefined) this.#links.delete(login.link);
    res.setHeader("set-cookie", this.#cookie(login.link as string, "", 0));
    const reason = refusalOf(query);
    if (reason !== undefined) {
      login.refuse(reason);
      return sendLoginPage(res, {
        status: 400,
        title: "Login failed",
        text: `The authorization server of ${login.server} refused the login: ${reason}. Call the tool again for a new login link.`,
      });
    }
    const failure = await login.accept(query.get("code") as string, query.get("iss") ?? undefined);
    if (failure)
      return sendLoginPage(res, {
        status: 502,
        title: "Login failed",
        text: `codemux could not finish the login to ${login.server}: ${failure.message}. Call the tool again for a new login link.`,
      });
    sendLoginPage(res, {
      status: 200,
      title: "Logged in",
      text: `Logged in to ${login.server} as ${login.principal}: codemux acts there for ${login.principal} with the account you signed in with. You can close this tab.`,
    });
  }

  /** Whether the request carries the binding cookie of `login`'s start page. */
  #bound(req: IncomingMessage, login: PendingLogin): boolean {
    if (login.link === undefined || login.binding === undefined) return false;
    const sent = cookieValue(req.headers.cookie, cookieName(login.link));
    if (sent === undefined) return false;
    const [a, b] = [Buffer.from(sent), Buffer.from(login.binding)];
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /**
   * The binding cookie of one login: HttpOnly, sent only to the callback, and SameSite=Lax so that the authorization
   * server's redirect back (a top-level navigation from its site) carries it while no other site's request does.
   */
  #cookie(link: string, value: string, maxAgeS: number): string {
    const secure = this.#origin.startsWith("https:") ? "; Secure" : "";
    return `${cookieName(link)}=${value}; Path=${LOGIN_CALLBACK_PATH}; Max-Age=${maxAgeS}; HttpOnly; SameSite=Lax${secure}`;
  }
}

/** One cookie per login, so that two logins in one browser do not overwrite each other's; named by a hash of the link, which it does not reveal. */
function cookieName(link: string): string {
  return `codemux_login_${createHash("sha256").update(link).digest("hex").slice(0, 16)}`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, value] = part.trim().split("=", 2);
    if (key === name) return value;
  }
  return undefined;
}
