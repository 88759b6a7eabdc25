import { ADMIN_SCOPE, hasScope, type SessionInfo } from "@codemux/core";
import { REST_HINTS, callRequest, errorText, searchCatalog } from "@codemux/server";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FailureLimit } from "../auth/failure-limit";
import type { Identity } from "../auth/identity";
import { readBody } from "../body";
import type { HttpCore } from "../context";
import { HttpError } from "../errors";
import { toHttpError } from "../rest-errors";
import { ANONYMOUS_PRINCIPAL } from "../tokens";
import type { ActivityLog } from "./activity";
import { CLIENT_SCRIPT } from "./client";
import { argumentsOf } from "./form";
import { href, html, type SafeHtml } from "./html";
import { page, type PagePath, type PageView } from "./layout";
import { loginPage } from "./login";
import { activityFilter, activityPage, activityRows, callPage, matches } from "./pages/activity";
import { NO_APPROVALS, approvalsPage } from "./pages/approvals";
import { NO_JOBS, jobPage, jobsPage } from "./pages/jobs";
import { principalsPage, type PrincipalView } from "./pages/principals";
import { searchResults, toolPage, toolsPage, type CallOutcome } from "./pages/tools";
import { serversPage } from "./pages/servers";
import type { UiSources } from "./sources";
import { ICON, STYLESHEET } from "./style";
import { UiSessions, csrfMatches, type UiSession } from "./ui-sessions";

/** Why a sign-in was refused: the label of `codemux_ui_sign_ins_refused_total`. */
export type SignInRefusal = "bad_token" | "not_admin" | "too_many";

/** Where the admin page lives; every link inside it is relative to `/ui/`. */
export const UI_PATH = "/ui";
const COOKIE = "codemux_ui";
/** No script but ours, no inline script or style, no framing, forms only to ourselves. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
// same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on form posts, which the Origin check refuses.
const SECURITY_HEADERS = {
  "content-security-policy": CSP,
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
};
/** A sign-in lasts 8 hours (a working day), and at most 1000 browsers are signed in at once. */
const SESSION_TTL_MS = 8 * 60 * 60_000;
const MAX_SESSIONS = 1000;
/** Form bodies are small: a token, or a tool's arguments typed by hand. */
const MAX_FORM_BYTES = 256 * 1024;
/** Search hits a query shows. */
const SEARCH_LIMIT = 20;

export interface AdminUiOptions {
  core: HttpCore;
  /** The calls the page shows: recorded by middleware the core was composed with (see `httpCallRecorders`). */
  activity: ActivityLog;
  sources: UiSources;
  /** Whether tokens are required at all (without them the sign-in asks for none). */
  authRequired: () => boolean;
  /** The identity of a presented token; throws the 401 when it is not valid. */
  identify: (token: string) => Promise<Identity>;
  /** The session an admin's calls and searches run as (the same one as their REST calls). */
  principalSession: (identity: Identity) => SessionInfo;
  /** The principals holding a static token (never the tokens), and the OAuth issuer when OAuth is on. */
  principals: () => PrincipalView[];
  oauthIssuer: string | undefined;
  /** Which instance the pages show: `host:port (pid N)`. */
  instance: () => string;
  /** Why the config file's last edit was refused, shown on every page until an edit applies. */
  reloadRefused?: () => string | undefined;
  /** Marks the socket as authenticated, as an API request with a good token does (else it is closed at the auth deadline). */
  authenticated: (socket: Socket) => void;
  /** `Secure` on the cookie: the page is reached over HTTPS. */
  secureCookie: boolean;
  /** Logs an unexpected failure (the page shows only that it failed). */
  logError: (error: unknown) => void;
  /** The client address of a request (a trusted proxy's X-Forwarded-For client): failed sign-ins are limited per address. */
  clientAddress: (req: IncomingMessage) => string;
  /** Failed tokens per client address, shared with every route's bearer tokens: a guess here counts there too. */
  failures: FailureLimit;
  /** Called for each refused sign-in, with why (counted in /metrics). */
  onSignInRefused?: (reason: SignInRefusal) => void;
  now?: () => number;
}

/**
 * The admin web page at /ui: server-rendered HTML for admin principals only. A token is presented once
 * to sign in; the browser then holds an HttpOnly, SameSite=Strict session cookie scoped to /ui, and
 * every state change is a POST carrying the session's CSRF token. Everything shown is escaped.
 */
export class AdminUi {
  readonly activity: ActivityLog;
  readonly #options: AdminUiOptions;
  readonly #sessions: UiSessions;
  readonly #now: () => number;

  constructor(options: AdminUiOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.activity = options.activity;
    this.#sessions = new UiSessions({ ttlMs: SESSION_TTL_MS, max: MAX_SESSIONS, now: this.#now });
    // Its calls' arguments and results are what the principal's calls wrote: forgotten with the rest.
    options.core.onForget((principal) => ({ activity: this.activity.forget(principal) }));
  }

  /** Signs out every browser of these principals (their token was revoked). */
  endPrincipals(principals: readonly string[]): void {
    this.#sessions.closePrincipals(principals);
  }

  /** Answers a request under /ui; errors become pages, never JSON or a stack. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const session = this.#sessions.get(cookieOf(req));
    try {
      if (session) this.#options.authenticated(req.socket);
      await this.#route({ req, res, url, session });
    } catch (error) {
      const failure = toHttpError(error);
      if (failure.code === "INTERNAL") this.#options.logError(error);
      this.#send(
        res,
        failure.status,
        this.#page(session, { title: "Something went wrong", body: html`<p class="notice bad" role="alert">${failure.message}</p>` }),
      );
    }
  }

  async #route(exchange: Exchange): Promise<void> {
    const { req, res, url, session } = exchange;
    // The pages' relative links need the trailing slash: /ui answers with the way to /ui/.
    if (url.pathname === UI_PATH) return redirect(res, "ui/");
    const name = url.pathname.slice(UI_PATH.length + 1);
    const method = req.method ?? "GET";
    const asset = ASSETS.get(name);
    if (asset && method === "GET") return send(res, 200, asset);
    if (name === "login") {
      if (method === "POST") return this.#login(req, res);
      if (method === "GET") return this.#send(res, 200, this.#page(undefined, { title: "Sign in", body: loginPage(this.#options.authRequired()) }));
      throw methodNotAllowed("GET or POST");
    }
    if (!session) {
      if (method === "GET") return redirect(res, "login");
      throw new HttpError("UNAUTHORIZED", "Sign in first: your admin session ended or was never opened.");
    }
    if (method === "POST") {
      const form = new URLSearchParams((await readBody(req, MAX_FORM_BYTES)).toString("utf8"));
      // Every state change carries the session's CSRF token: another site's form cannot know it.
      if (!csrfMatches(session, form.get("csrf") ?? undefined))
        throw new HttpError(
          "FORBIDDEN",
          "This form is stale or did not come from the admin page (its CSRF token is missing or wrong); reload the page and try again.",
        );
      return this.#post({ res, session }, name, form);
    }
    if (method !== "GET") throw methodNotAllowed("GET or POST");
    return this.#get({ res, url, session }, name);
  }

  async #get(exchange: { res: ServerResponse; url: URL; session: UiSession }, name: string): Promise<void> {
    const { res, url, session } = exchange;
    const { core, sources } = this.#options;
    const show = (title: string, current: PagePath, body: SafeHtml) => this.#send(res, 200, this.#page(session, { title, current, body }));
    const param = (key: string) => (url.searchParams.get(key) ?? "").slice(0, 1000);
    switch (name) {
      case "":
        return show(
          "Servers",
          "./",
          serversPage(core.status(), session, (server) => core.scanReport(server)),
        );
      case "tools":
        return show("Tools", "tools", toolsPage(param("q"), await this.#search(param("q"), session)));
      case "tool-results":
        return this.#send(res, 200, await this.#search(param("q"), session));
      case "tool":
        return show(param("name"), "tools", await this.#tool(param("name"), session));
      case "activity": {
        const filter = activityFilter(url);
        return show("Activity", "activity", activityPage(filter, activityRows(this.activity.list(matches(filter)))));
      }
      case "activity-rows":
        return this.#send(res, 200, activityRows(this.activity.list(matches(activityFilter(url)))));
      case "call": {
        const entry = this.activity.get(Number(param("id")));
        if (!entry) throw new HttpError("NOT_FOUND", "That call is no longer kept: the Activity page keeps the last 500 calls of this instance.");
        return show(`Call of ${entry.tool}`, "activity", callPage(entry));
      }
      case "jobs":
        return show("Jobs", "jobs", sources.jobs ? jobsPage(sources.jobs.all(), session) : html`<p class="notice">${NO_JOBS}</p>`);
      case "job": {
        const job = this.#job(param("id"));
        return show(`Job ${job.id}`, "jobs", jobPage(job, await this.#options.sources.jobs?.result(job), session));
      }
      case "approvals":
        return show(
          "Approvals",
          "approvals",
          sources.approvals
            ? approvalsPage(await sources.approvals.pending(), (n) => core.tools().get(n), session)
            : html`<p class="notice">${NO_APPROVALS}</p>`,
        );
      case "principals":
        return show("Principals and policies", "principals", principalsPage(this.#options.principals(), core.policies, this.#options.oauthIssuer));
    }
    throw notFound(name);
  }

  async #post(exchange: { res: ServerResponse; session: UiSession }, name: string, form: URLSearchParams): Promise<void> {
    const { res, session } = exchange;
    const { core, sources } = this.#options;
    switch (name) {
      case "logout":
        this.#sessions.close(session.id);
        res.setHeader("set-cookie", this.#cookie("", 0));
        return redirect(res, "login");
      case "restart": {
        const server = form.get("server") ?? "";
        if (!core.status().some((s) => s.name === server))
          throw new HttpError("NOT_FOUND", `There is no server "${server.slice(0, 80)}" to restart; reload the Servers page.`);
        const { restart } = core;
        if (!restart) throw new HttpError("NOT_IMPLEMENTED", "This server pool cannot restart one server; restart codemux instead.");
        await restart(server);
        return redirect(res, "./");
      }
      case "call":
        return this.#send(res, 200, this.#page(session, { title: form.get("name") ?? "", current: "tools", body: await this.#call(form, session) }));
      case "cancel-job": {
        const job = this.#job(form.get("id") ?? "");
        await sources.jobs?.cancel(job.id, job.principal, "admin");
        return redirect(res, href("job", { id: job.id }));
      }
      case "approve": {
        if (!sources.approvals) throw new HttpError("NOT_FOUND", NO_APPROVALS);
        // The page's form names the definition shown, so a definition that changed since is not approved unseen.
        const approved = await sources.approvals.approve(form.get("target") ?? "", form.get("hash") ?? undefined);
        if (approved.length === 0)
          throw new HttpError("NOT_FOUND", "That definition no longer waits as shown (it was approved, or changed again); reload the Approvals page.");
        return redirect(res, "approvals");
      }
      case "keep-blocked": {
        if (!sources.approvals) throw new HttpError("NOT_FOUND", NO_APPROVALS);
        if (!(await sources.approvals.keepBlocked(form.get("name") ?? "", form.get("hash") ?? "")))
          throw new HttpError(
            "NOT_FOUND",
            "That definition no longer waits as shown (it was approved, kept blocked, or changed again); reload the Approvals page.",
          );
        return redirect(res, "approvals");
      }
    }
    throw notFound(name);
  }

  async #login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const address = this.#options.clientAddress(req);
    const { failures } = this.#options;
    const refuse = (status: number, reason: SignInRefusal, problem: string) => {
      this.#options.onSignInRefused?.(reason);
      this.#send(res, status, this.#page(undefined, { title: "Sign in", body: loginPage(this.#options.authRequired(), problem) }));
    };
    // Checked before the token is read: while an address is held back, its guesses are not even tried.
    const waitS = Math.ceil(failures.waitMs(address) / 1000);
    if (waitS > 0) {
      res.setHeader("retry-after", String(waitS));
      return refuse(429, "too_many", `Too many failed sign-ins from ${address}: wait ${waitS} s, then sign in with a current admin token.`);
    }
    const form = new URLSearchParams((await readBody(req, MAX_FORM_BYTES)).toString("utf8"));
    const token = (form.get("token") ?? "").trim();
    let identity: Identity;
    if (!this.#options.authRequired()) identity = { principal: ANONYMOUS_PRINCIPAL };
    else {
      try {
        identity = await this.#options.identify(token);
      } catch (error) {
        if (!HttpError.isInstance(error) || error.status !== 401) throw error;
        failures.failed(address, token);
        return refuse(401, "bad_token", "That token is not valid here. Give a current admin token.");
      }
    }
    if (!hasScope(identity, ADMIN_SCOPE)) {
      failures.failed(address, token);
      return refuse(403, "not_admin", `${identity.principal} is not an admin: the admin page needs a token whose scopes include "admin".`);
    }
    const session = this.#sessions.open(identity);
    this.#options.authenticated(req.socket);
    res.setHeader("set-cookie", this.#cookie(session.id, Math.floor((session.expiresAt - this.#now()) / 1000)));
    return redirect(res, "./");
  }

  async #search(query: string, session: UiSession): Promise<SafeHtml> {
    if (!query.trim()) return searchResults(query, undefined);
    // The search answer itself carries no hints: any front end's services serve.
    const answer = await searchCatalog(
      this.#options.core.servicesFor(REST_HINTS),
      { query, limit: SEARCH_LIMIT, detail: "summary" },
      this.#options.principalSession(session.identity),
    );
    return searchResults(query, answer);
  }

  async #tool(name: string, session: UiSession, call?: { outcome: CallOutcome; values: URLSearchParams }): Promise<SafeHtml> {
    const { core } = this.#options;
    const as = this.#options.principalSession(session.identity);
    const entry = await core.resolve(name, as);
    return toolPage({ entry, typescript: core.moduleSource(entry.moduleSpecifier, as) ?? "", session, call });
  }

  /** Runs a call from the Tools page's form through the whole pipeline, as the signed-in admin, with origin "ui". */
  async #call(form: URLSearchParams, session: UiSession): Promise<SafeHtml> {
    const name = form.get("name") ?? "";
    const { core } = this.#options;
    const as = this.#options.principalSession(session.identity);
    const entry = await core.resolve(name, as);
    try {
      const result = await core.call(callRequest({ name, args: argumentsOf(entry.tool.inputSchema, form) }, { session: as, origin: "ui" }));
      return await this.#tool(name, session, { outcome: { result }, values: form });
    } catch (error) {
      return this.#tool(name, session, { outcome: { error: errorText(error) }, values: form });
    }
  }

  #job(id: string) {
    const job = this.#options.sources.jobs?.all().find((j) => j.id === id);
    if (!job) throw new HttpError("NOT_FOUND", `There is no job "${id.slice(0, 80)}" here; it may have ended and passed its retention.`);
    return job;
  }

  #page(session: UiSession | undefined, view: PageView): SafeHtml {
    const refused = this.#options.reloadRefused?.();
    return page(
      {
        instance: this.#options.instance(),
        session,
        ...(refused ? { notice: `The config file's last edit was not applied, and the last good config keeps serving: ${refused}` } : {}),
      },
      view,
    );
  }

  #cookie(value: string, maxAgeS: number): string {
    return `${COOKIE}=${value}; Path=${UI_PATH}; HttpOnly; SameSite=Strict; Max-Age=${Math.max(0, maxAgeS)}${this.#options.secureCookie ? "; Secure" : ""}`;
  }

  #send(res: ServerResponse, status: number, body: SafeHtml): void {
    send(res, status, { text: body.text, type: "text/html; charset=utf-8" });
  }
}

/** One request to the admin page, with its signed-in session if the cookie names one. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  session: UiSession | undefined;
}

/** The script, stylesheet and icon, shipped in the package (no CDN: the page works offline). */
const ASSETS = new Map([
  ["ui.js", { text: CLIENT_SCRIPT, type: "text/javascript; charset=utf-8" }],
  ["ui.css", { text: STYLESHEET, type: "text/css; charset=utf-8" }],
  ["icon.svg", { text: ICON, type: "image/svg+xml" }],
]);

function send(res: ServerResponse, status: number, body: { text: string; type: string }): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.writeHead(status, { "content-type": body.type, "content-length": String(Buffer.byteLength(body.text)) });
  res.end(body.text);
}

/** Whether a path is the admin page's. */
export function isUiPath(path: string): boolean {
  return path === UI_PATH || path.startsWith(`${UI_PATH}/`);
}

function cookieOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== "string") return undefined;
  for (const part of header.split(";")) {
    const [key, value] = part.trim().split("=", 2);
    if (key === COOKIE) return value;
  }
  return undefined;
}

/** A 303 to a relative location, so that it works under any path prefix a proxy adds. */
function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, "content-length": "0" });
  res.end();
}

function methodNotAllowed(allowed: string): HttpError {
  return new HttpError("METHOD_NOT_ALLOWED", `Use ${allowed} on this page.`);
}

function notFound(name: string): HttpError {
  return new HttpError("NOT_FOUND", `The admin page has no "${name.slice(0, 80)}"; start again from the Servers page.`);
}
