import { METRICS_SCOPE, isLoopback, type SessionInfo } from "@codemux/core";
import { VERSION } from "@codemux/server";
import { context as traceContext } from "@opentelemetry/api";
import { tracing } from "@codemux/pool";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { authority, hostOfHeader, isWildcard } from "./address";
import { principalSessionId, sharedStateMetrics, sharedStateOf } from "./affinity";
import { Authenticator, type Authenticated } from "./auth/authenticator";
import { FailureLimit } from "./auth/failure-limit";
import { sessionFields, type Identity } from "./auth/identity";
import { LOGIN_START_PATH, LoginCallbackRoute } from "./auth/login-callback";
import { handleResourceMetadata, isMetadataPath } from "./auth/metadata";
import { handleCompat } from "./compat";
import { ConnectionGuard } from "./connections";
import type { Gateway, HttpCore, RequestContext } from "./context";
import { endStreamWithRetry, hintRetry } from "./drain";
import { DrainingError, HeldBackError, HttpError, UnsafeBindError } from "./errors";
import { maskTarget, requestIdOf, stderrSink, survivePipeErrors, type LogRecord } from "./log";
import { handleMcp } from "./mcp";
import { endHttpSpan, startHttpSpan, traceIds } from "./tracing";
import { ModernMcp } from "./modern";
import type { Labels, Metrics, MetricsReader } from "./metrics";
import { httpCallRecorders } from "./recorders";
import { resolveOptions, type HttpServeOptions, type ResolvedOptions } from "./options";
import { COMMON_HEADERS, rpcCodeOf, sendError, sendJson, sendRpcError, sendText, withHeaders } from "./respond";
import { ANONYMOUS_PRINCIPAL } from "./tokens";
import { handleRest } from "./rest";
import { toHttpError } from "./rest-errors";
import { isUiPath, type AdminUi } from "./ui/admin-ui";
import { mountAdminUi } from "./ui/mount";
import { SessionTable } from "./sessions";
import { openSseSession, postSseMessage } from "./sse";

const CORS_ALLOW_HEADERS = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, X-API-Key, X-Request-Id";
/** COMMON_HEADERS as pairs, made once: they are set on every response. */
const COMMON_HEADER_LIST = Object.entries(COMMON_HEADERS);
const CORS_EXPOSE_HEADERS = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, X-Request-Id, Retry-After";

/** Adds fields to every request's log line (a plugin's tenant, a trace id). Must be cheap and must not throw. */
export type LogFieldsHook = (req: IncomingMessage, record: LogRecord) => LogRecord | undefined;

/**
 * codemux over HTTP: Streamable HTTP at /mcp (and legacy SSE at /sse + /messages) for many MCP
 * clients, a REST gateway at /v1, /healthz, /readyz and /metrics, all over one shared core.
 * Every request passes the Host and Origin checks, then auth, before anything else reads it.
 *
 * @example
 * const core = new Codemux({ config: await loadConfigFile("codemux.json") });
 * core.start();
 * const http = new CodemuxHttpServer(core, { port: 3920, tokens: [{ name: "laptop", token: process.env.CODEMUX_TOKEN! }] });
 * await http.listen();
 * console.error(`serving ${http.url}/mcp`);
 * process.once("SIGTERM", async () => { await http.close(); await core.close(); });
 */
export class CodemuxHttpServer {
  readonly options: ResolvedOptions;
  readonly metrics: Metrics;
  readonly sessions: SessionTable;
  readonly #core: HttpCore;
  readonly #auth: Authenticator;
  readonly #server: Server;
  readonly #guard: ConnectionGuard;
  /** Failed tokens per client address, for every route and the admin page's sign-in alike. */
  readonly #failures = new FailureLimit();
  readonly #gateway: Gateway;
  readonly #modern: ModernMcp;
  readonly #ui: AdminUi;
  readonly #principalSessions = new Map<string, SessionInfo>();
  readonly #logHooks: LogFieldsHook[] = [];
  /** With a public URL, per-principal downstream logins come back here rather than to a loopback a remote browser cannot reach. */
  readonly #loginCallbacks: LoginCallbackRoute | undefined;
  /** Requests being answered, except open streams, with their context once known: shutdown waits for these, then answers them. */
  readonly #inFlight = new Map<ServerResponse, { mcp: boolean; ctx?: RequestContext }>();
  readonly #startedAt = Date.now();
  /** Open GET streams (2025 sessions' and legacy SSE): a drain ends them with a retry hint. */
  readonly #streams = new Set<ServerResponse>();
  #closing = false;
  #draining = false;
  #listening = false;

  constructor(core: HttpCore, options: HttpServeOptions = {}) {
    this.options = resolveOptions(options, options.log ?? stderrSink);
    this.#core = core;
    const recorders = options.recorders ?? httpCallRecorders({ mask: core.mask });
    this.metrics = recorders.metrics;
    this.#auth = new Authenticator({
      tokens: this.options.tokens,
      tokenFile: this.options.tokenFile,
      tokenFilePollMs: this.options.tokenFilePollMs,
      publicUrl: this.options.publicUrl,
      oauth: this.options.oauth,
      allowQueryToken: this.options.allowQueryToken,
      log: this.options.log,
      onRevoked: (principals) => this.#revoke(principals),
      failures: this.#failures,
    });
    if (!this.#auth.required && !isLoopback(this.options.host) && !this.options.insecureNoAuth)
      throw new UnsafeBindError(authority(this.options.host, this.options.port));
    const { maxSessionsPerPrincipal, principalLimits } = this.options;
    const maxPerPrincipal = (principal: string) => principalLimits[principal]?.sessions ?? maxSessionsPerPrincipal;
    // Only the default share is borrowed past while no other principal waits; a limit the operator set binds always.
    const borrows = (principal: string) => principalLimits[principal]?.sessions === undefined && !this.options.maxSessionsPerPrincipalSet;
    this.sessions = new SessionTable({
      maxSessions: this.options.maxSessions,
      maxPerPrincipal,
      borrows,
      idleMs: this.options.sessionIdleMs,
      onRefused: ({ limit }) => this.metrics.counter("codemux_sessions_rejected_total", "").inc({ limit }),
    });
    const principalSession = (identity: Identity) => this.#principalSession(identity);
    const warn = (message: string, fields?: LogRecord) => this.options.log({ time: new Date().toISOString(), level: "warn", msg: message, ...fields });
    this.#modern = new ModernMcp({ core, options: this.options, principalSession, warn, maxListensPerPrincipal: maxPerPrincipal });
    this.#gateway = {
      core,
      options: this.options,
      sessions: this.sessions,
      metrics: this.metrics,
      principalSession,
      requireScope: (ctx, scope, what) => this.#auth.requireScope({ identity: ctx.identity, path: ctx.url.pathname }, scope, what),
      warn,
      modern: this.#modern,
    };
    this.#loginCallbacks = this.options.publicUrl
      ? new LoginCallbackRoute({
          publicUrl: this.options.publicUrl,
          authRequired: () => this.#auth.required,
          identify: async (token) => (this.#auth.required ? this.#auth.identify(token, LOGIN_START_PATH, { oauth: true }) : { principal: ANONYMOUS_PRINCIPAL }),
          clientAddress: (req) => this.#guard.clientOf(req),
          failures: this.#failures,
        })
      : undefined;
    if (this.#loginCallbacks) core.useLoginCallbacks(this.#loginCallbacks);
    this.#registerMetrics();
    this.#ui = mountAdminUi({
      core,
      options: this.options,
      auth: this.#auth,
      principalSession,
      port: () => this.port,
      authenticated: (socket) => this.#guard.authenticated(socket),
      clientAddress: (req) => this.#guard.clientOf(req),
      failures: this.#failures,
      metrics: this.metrics,
      activity: recorders.activity,
    });
    const headersTimeout = Math.min(this.options.headersTimeoutMs, this.options.requestTimeoutMs);
    this.#server = createServer(
      {
        headersTimeout,
        requestTimeout: this.options.requestTimeoutMs,
        // Node checks the two timeouts above only this often (30 s by default): slow clients must not outlive them by much.
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 2))),
        keepAliveTimeout: 5000,
        maxHeaderSize: 16 * 1024,
      },
      (req, res) => void this.#handle(req, res),
    );
    this.#server.maxConnections = this.options.maxConnections;
    this.#server.maxRequestsPerSocket = 10_000;
    this.#guard = new ConnectionGuard({
      maxPerAddress: this.options.maxConnectionsPerAddress,
      // A limit set by the operator binds always; the default share is work-conserving, as for sessions.
      ...(this.options.maxConnectionsPerAddressSet ? {} : { maxConnections: this.options.maxConnections }),
      trustedProxies: this.options.trustedProxies,
      authTimeoutMs: this.options.authTimeoutMs,
      onRefused: (reason) => this.metrics.counter("codemux_connections_refused_total", "").inc({ reason }),
      onIdleClosed: () => this.metrics.counter("codemux_connections_idle_closed_total", "").inc(),
    });
    this.#server.on("connection", (socket: Socket) => this.#guard.accept(socket));
  }

  /** Adds fields to every request log line, for plugins (see README, "Hooks"). */
  addLogFields(hook: LogFieldsHook): void {
    this.#logHooks.push(hook);
  }

  /** Binds the address; resolves once listening. A busy port rejects with the system error (EADDRINUSE). */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      this.#server.once("error", onError);
      this.#server.listen(this.options.port, this.options.host, () => {
        this.#server.off("error", onError);
        resolve();
      });
    });
    this.#listening = true;
    survivePipeErrors();
    if (!this.#auth.required)
      this.#gateway.warn(`serving ${this.url} without auth: any local process can use it; set --token for more than a single-user machine`);
  }

  /** The names of the static tokens in force (the token file's as last read). */
  get tokenNames(): string[] {
    return this.#auth.tokenNames;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo | null)?.port ?? this.options.port;
  }

  /** The base URL clients use (loopback for a wildcard bind). */
  get url(): string {
    const host = isWildcard(this.options.host) ? "127.0.0.1" : this.options.host;
    return `http://${authority(host, this.port)}`;
  }

  /**
   * Graceful shutdown: stop accepting, let requests in flight finish (up to `shutdownGraceMs`),
   * then close every session and connection. The core is the caller's to close.
   */
  async close(): Promise<void> {
    return this.#shutdown(this.options.shutdownGraceMs);
  }

  /**
   * SIGTERM's shutdown for a balanced instance: /readyz answers 503 "draining" at once, new sessions
   * are refused, open streams end with an SSE retry hint, requests in flight finish; then `close`,
   * all within `ms`.
   */
  async drain(ms: number = this.options.shutdownGraceMs): Promise<void> {
    if (this.#closing) return;
    const deadline = Date.now() + ms;
    this.#draining = true;
    this.sessions.drain();
    for (const res of this.#streams) endStreamWithRetry(res);
    for (const res of this.#inFlight.keys()) hintRetry(res);
    this.#modern.endListens();
    await this.#drain(ms);
    await this.#shutdown(Math.max(0, deadline - Date.now()));
  }

  async #shutdown(graceMs: number): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#auth.close();
    if (this.#loginCallbacks) this.#core.useLoginCallbacks(undefined);
    const closed = this.#listening ? new Promise<void>((resolve) => this.#server.close(() => resolve())) : Promise.resolve();
    this.#server.closeIdleConnections();
    this.#modern.endListens();
    await this.#drain(graceMs);
    this.#answerInFlight();
    await this.sessions.closeAll();
    await this.#modern.close();
    this.#server.closeAllConnections();
    await closed;
  }

  #drain(graceMs: number): Promise<void> {
    if (this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(finish, graceMs);
      const check = setInterval(() => {
        if (this.#inFlight.size === 0) finish();
      }, 25);
      function finish() {
        clearTimeout(timer);
        clearInterval(check);
        resolve();
      }
    });
  }

  /** Past the grace, each request still running gets the shutdown 503; on an MCP stream already open, a JSON-RPC error for each request it carries. */
  #answerInFlight(): void {
    const failure = shuttingDown();
    const rpcError = { code: -32000, message: failure.message };
    for (const [res, { mcp, ctx }] of this.#inFlight) {
      if (res.writableEnded || res.destroyed) continue;
      if (!res.headersSent) {
        if (mcp) sendRpcError(withHeaders(res, failure.headers), failure.status, rpcError);
        else sendError(res, failure);
        continue;
      }
      if (String(res.getHeader("content-type")).startsWith("text/event-stream")) {
        for (const id of ctx?.rpcIds ?? []) res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, error: rpcError })}\n\n`);
      }
      res.end();
    }
  }

  #principalSession(identity: Identity): SessionInfo {
    const { principal } = identity;
    let session = this.#principalSessions.get(principal);
    if (!session) {
      session = { id: principalSessionId(principal, this.options.scaleOut), principal };
      this.#principalSessions.set(principal, session);
    }
    // The groups and scopes of this request's credential: an OAuth principal's may change from one token to the next.
    const { groups, scopes } = sessionFields(identity);
    session.groups = groups;
    session.scopes = scopes;
    return session;
  }

  /** A token removed or changed in the token file: its principal's sessions end now, and its next request must authenticate anew. */
  #revoke(principals: string[]): void {
    for (const principal of principals) {
      this.sessions.closePrincipal(principal);
      this.#principalSessions.delete(principal);
    }
    this.#ui.endPrincipals(principals);
  }

  /** Re-reads the token file now, as its watcher would on a change. */
  reloadTokens(): Promise<void> {
    return this.#auth.reloadTokens();
  }

  #registerMetrics(): void {
    const { metrics } = this;
    metrics.gauge("codemux_sessions", "Open MCP sessions, by transport.", () => [
      [{ transport: "streamable" }, this.sessions.count("streamable")],
      [{ transport: "sse" }, this.sessions.count("sse")],
    ]);
    metrics.gauge("codemux_mcp_request_servers", "MCP 2026-07-28 servers alive: each is built for one request and ends with it.", () => [
      [{}, this.#modern.alive],
    ]);
    metrics.gauge("codemux_servers", "Downstream servers the reader may know of, by state.", (reader) => {
      const counts = new Map<string, number>();
      for (const s of this.#core.status()) if (reader?.knowsServer(s.name) ?? true) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
      return [...counts].map(([state, n]) => [{ state }, n]);
    });
    metrics.gauge("codemux_tools", "Tools in the catalog, as the reader's policy shows it.", (reader) => [[{}, this.#core.tools(reader?.session).size]]);
    metrics.gauge("codemux_scan_findings", "The scan's findings in what each server lists (security.scan), by server and severity.", () =>
      this.#core.scanReports().flatMap((report) => {
        const counts = new Map<string, number>();
        for (const finding of [
          ...report.tools.flatMap((t) => t.findings),
          ...(report.instructions?.findings ?? []),
          ...report.items.flatMap((i) => i.findings),
        ])
          counts.set(finding.severity, (counts.get(finding.severity) ?? 0) + 1);
        return [...counts].map(([severity, n]): [Labels, number] => [{ server: report.server, severity }, n]);
      }),
    );
    metrics.gauge(
      "codemux_scan_held_tools",
      "Tools held back from the model (security.scan quarantine, or a changed pinned definition waiting), by server.",
      () => this.#core.scanReports().map((report): [Labels, number] => [{ server: report.server }, report.tools.filter((t) => t.held).length]),
    );
    // A 2026-07-28 listen stream is a POST that stays open: a stream, not a request being answered.
    metrics.gauge("codemux_http_requests_in_flight", "HTTP requests being answered (open streams excluded).", () => [
      [{}, this.#inFlight.size - this.#modern.listening],
    ]);
    sharedStateMetrics(metrics, this.options.scaleOut);
    metrics.gauge("process_resident_memory_bytes", "Resident memory of this process.", () => [[{}, process.memoryUsage().rss]]);
    metrics.counter("codemux_http_requests_total", "HTTP requests, by route and status.");
    metrics.histogram("codemux_http_request_duration_seconds", "HTTP request duration until the answer ended, by route.");
    metrics.counter("codemux_auth_failures_total", "Requests refused for a missing or wrong token.");
    metrics.counter("codemux_auth_held_back_total", "Requests whose token was refused unchecked: their address presented too many failed tokens.");
    metrics.counter(
      "codemux_connections_refused_total",
      "Connections refused past the limit per address, or closed unauthenticated at the deadline, by reason.",
    );
    metrics.counter("codemux_connections_idle_closed_total", "Idle keep-alive connections closed to make room for a new one from their address.");
    metrics.counter("codemux_sessions_rejected_total", "Sessions refused at a limit, by limit (sessions, sessionsPerPrincipal).");
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#guard.refused(req.socket)) {
      res.destroy();
      return;
    }
    const started = performance.now();
    const requestId = requestIdOf(req.headers["x-request-id"]);
    const log: LogRecord = {};
    let principal: string | undefined;
    let route = "other";
    res.setHeader("x-request-id", requestId);
    for (const [name, value] of COMMON_HEADER_LIST) res.setHeader(name, value);
    // With tracing on, the request is a SERVER span continuing the caller's traceparent header; its handling runs in the span's context.
    const traced = tracing() ? startHttpSpan(req, maskTarget(req.url ?? "").split("?", 1)[0] as string) : undefined;
    let path = "";
    res.once("close", () => {
      this.#inFlight.delete(res);
      this.#streams.delete(res);
      const ms = performance.now() - started;
      const status = res.headersSent ? res.statusCode : 499;
      this.metrics.counter("codemux_http_requests_total", "").inc({ route, status: String(status) });
      this.metrics.histogram("codemux_http_request_duration_seconds", "").observe({ route }, ms / 1000);
      const level = status >= 500 ? "error" : "info";
      // Built only when it will be written: at `logLevel` warn or error the access log costs nothing.
      if (!this.options.writesLevel(level)) {
        if (traced) endHttpSpan(traced, { method: req.method ?? "GET", route, path, status, principal });
        return;
      }
      let record: LogRecord = {
        time: new Date().toISOString(),
        level,
        msg: "request",
        requestId,
        method: req.method,
        path: maskTarget(req.url ?? ""),
        status,
        ms: Math.round(ms * 10) / 10,
        ...(principal ? { principal } : {}),
        ...(traced ? traceIds(traced) : {}),
        ...log,
      };
      if (traced) endHttpSpan(traced, { method: req.method ?? "GET", route, path, status, principal });
      for (const hook of this.#logHooks) {
        try {
          record = { ...record, ...hook(req, record) };
        } catch {
          // A plugin's hook must never cost a log line.
        }
      }
      this.options.log(record);
    });
    let mcpRoute = false;
    try {
      if (this.#closing) throw shuttingDown();
      const url = targetOf(req.url);
      path = url === undefined ? "" : url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname;
      route = routeName(path, this.options);
      const healthz = path === "/healthz" || (path === "/health" && this.options.compatRoutes);
      // Health probes are answered even past the address's connection limit: a busy client must not make its host look dead.
      const admission = this.#guard.admit(req, healthz || route === "readyz");
      res.once("close", () => this.#guard.done(req.socket));
      if (admission.close) res.setHeader("connection", "close");
      if (url === undefined) throw new HttpError("BAD_REQUEST", "The request target is not a valid path.");
      mcpRoute = route === "mcp" || route === "sse" || route === "messages";
      const stream = req.method === "GET" && (route === "mcp" || route === "sse");
      const entry: { mcp: boolean; ctx?: RequestContext } = { mcp: mcpRoute };
      if (!stream) this.#inFlight.set(res, entry);
      else if (this.#draining) throw new DrainingError("new streams");
      else this.#streams.add(res);
      if (healthz) {
        sendJson(res, 200, { status: "ok", version: VERSION, uptimeS: Math.round((Date.now() - this.#startedAt) / 1000), sessions: this.sessions.size });
        return;
      }
      // A probe without a token (Kubernetes, compose) learns ready or not from the status code; the detail needs a token.
      if (route === "readyz" && this.#auth.required && this.#auth.credentialOf(req, url) === undefined) return await this.#probe(req, res);
      this.#checkHost(req);
      const origin = this.#checkOrigin(req);
      if (origin) this.#cors(res, origin);
      if (req.method === "OPTIONS") {
        res.writeHead(204).end();
        return;
      }
      if (isMetadataPath(path)) return handleResourceMetadata({ req, res }, path, this.options);
      if (this.#loginCallbacks?.serves(path)) return await this.#loginCallbacks.handle(req, res, { path, query: url.searchParams });
      // The admin page signs its browsers in with a cookie of its own, not a bearer token.
      if (route === "ui") return await this.#ui.handle(req, res, url);
      if (route === "other") throw notFound(path);
      const authenticating = this.#authenticate(req, { url, path, client: admission.client });
      const auth = authenticating instanceof Promise ? await authenticating : authenticating;
      principal = auth.identity.principal;
      const ctx: RequestContext = { req, res, url, requestId, principal, identity: auth.identity, queryToken: auth.queryToken, log };
      entry.ctx = ctx;
      await (traced ? traceContext.with(traced.context, () => this.#route(ctx, path, route)) : this.#route(ctx, path, route));
    } catch (error) {
      const failure = toHttpError(error);
      if (failure.status >= 500 && failure.code === "INTERNAL") {
        this.options.log({
          time: new Date().toISOString(),
          level: "error",
          msg: "internal error",
          requestId,
          error: error instanceof Error ? (error.stack ?? error.message).slice(0, 2000) : String(error),
        });
      }
      if (mcpRoute) sendRpcError(withHeaders(res, failure.headers), failure.status, { code: rpcCodeOf(failure), message: failure.message });
      else sendError(res, failure);
    }
  }

  async #route(ctx: RequestContext, path: string, route: string): Promise<void> {
    switch (route) {
      case "mcp":
        return handleMcp(this.#gateway, ctx);
      case "sse":
        return openSseSession(this.#gateway, ctx);
      case "messages":
        return postSseMessage(this.#gateway, ctx);
      case "readyz":
        return this.#ready(ctx);
      case "metrics":
        only(ctx, "GET");
        this.#gateway.requireScope(ctx, METRICS_SCOPE, "Reading /metrics");
        sendText(ctx.res, this.metrics.render(this.#reader(ctx)), "text/plain; version=0.0.4; charset=utf-8");
        return;
      case "rest":
        if (!(await handleRest(this.#gateway, ctx, path))) throw notFound(path);
        return;
      case "compat":
        if (!(await handleCompat(this.#gateway, ctx, path))) throw notFound(path);
        return;
    }
    throw notFound(path);
  }

  /** Readiness with its detail, as the caller's policy shows it: a server it hides is not named, nor counted in the tools. */
  async #ready(ctx: RequestContext): Promise<void> {
    only(ctx, "GET");
    if (this.#draining) {
      sendJson(ctx.res, 503, { status: "draining", sessions: this.sessions.size });
      return;
    }
    const ready = await this.#core.ready(0);
    const reader = this.#reader(ctx);
    const servers = this.#core
      .status()
      .filter((s) => reader.knowsServer(s.name))
      .map((s) => ({ name: s.name, state: s.state, tools: s.toolCount, ...(s.error ? { error: s.error } : {}) }));
    const refused = this.options.reloadRefused();
    sendJson(ctx.res, ready ? 200 : 503, {
      status: ready ? "ready" : "starting",
      tools: this.#core.tools(reader.session).size,
      sessions: this.sessions.size,
      servers,
      ...sharedStateOf(this.options.scaleOut),
      // Serving the last good config is no reason to be unready; the operator still learns the file was not applied.
      ...(refused ? { config: `not reloaded: ${refused}` } : {}),
    });
  }

  /** Readiness for a caller without a token: the status code and the word, nothing about servers. */
  async #probe(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "GET") throw new HttpError("METHOD_NOT_ALLOWED", "Use GET on this path.", { headers: { allow: "GET" } });
    if (this.#draining) return sendJson(res, 503, { status: "draining" });
    const ready = await this.#core.ready(0);
    sendJson(res, ready ? 200 : 503, { status: ready ? "ready" : "starting" });
  }

  /** The caller as status answers see it: which servers its policy lets it know of (see `Access.servers`). */
  #reader(ctx: RequestContext): MetricsReader {
    const session = this.#principalSession(ctx.identity);
    return { session, knowsServer: (server) => this.#core.knowsServer(session, server) };
  }

  /** DNS-rebinding protection: the Host header must name this server (loopback names, the bound address, or an allowed host). */
  #checkHost(req: IncomingMessage): void {
    if (this.options.anyHost) return;
    const header = req.headers.host;
    const host = header ? hostOfHeader(header) : undefined;
    if (host && this.options.allowedHosts.includes(host)) return;
    throw new HttpError(
      "INVALID_HOST",
      `Host "${(header ?? "").slice(0, 100)}" is not one this server answers to; add it with --allowed-host if a proxy forwards it.`,
    );
  }

  /** A browser's Origin must be this server itself, a loopback page on a loopback bind, or a configured CORS origin; returns it when CORS applies. */
  #checkOrigin(req: IncomingMessage): string | undefined {
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    const cors = this.options.corsOrigins;
    if (cors.includes("*") || cors.includes(origin)) return origin;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed && (parsed.protocol === "http:" || parsed.protocol === "https:")) {
      const host = parsed.hostname.replace(/^\[|\]$/g, "").toLowerCase();
      if (parsed.host === req.headers.host) return undefined;
      if (isLoopback(host) && isLoopback(this.options.host)) return undefined;
    }
    throw new HttpError("INVALID_ORIGIN", `Origin "${origin.slice(0, 100)}" may not call this server; list it with --cors ORIGIN to allow a web app.`);
  }

  #cors(res: ServerResponse, origin: string): void {
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("vary", "Origin");
    res.setHeader("access-control-allow-methods", "GET, POST, DELETE, OPTIONS");
    res.setHeader("access-control-allow-headers", CORS_ALLOW_HEADERS);
    res.setHeader("access-control-expose-headers", CORS_EXPOSE_HEADERS);
    res.setHeader("access-control-max-age", "600");
  }

  /** The request's identity (at once for a static token, see `Authenticator.authenticate`); failures are counted for /metrics. */
  #authenticate(req: IncomingMessage, target: { url: URL; path: string; client: string }): Authenticated | Promise<Authenticated> {
    const counted = (error: unknown): never => {
      if (HttpError.isInstance(error) && error.code === "UNAUTHORIZED") this.metrics.counter("codemux_auth_failures_total", "").inc();
      if (error instanceof HeldBackError) this.metrics.counter("codemux_auth_held_back_total", "").inc();
      throw error;
    };
    let auth: Authenticated | Promise<Authenticated>;
    try {
      auth = this.#auth.authenticate(req, target);
    } catch (error) {
      return counted(error);
    }
    if (!(auth instanceof Promise)) {
      this.#guard.authenticated(req.socket);
      return auth;
    }
    return auth.then((proved) => {
      this.#guard.authenticated(req.socket);
      return proved;
    }, counted);
  }
}

function shuttingDown(): HttpError {
  return new HttpError("CAPACITY", "codemux is shutting down; retry against the next instance.", { headers: { connection: "close", "retry-after": "5" } });
}

function only(ctx: RequestContext, method: string): void {
  if (ctx.req.method !== method) throw new HttpError("METHOD_NOT_ALLOWED", `Use ${method} on this path.`, { headers: { allow: method } });
}

/** The request target as a URL; undefined when it is not one. */
function targetOf(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? "/", "http://codemux.invalid");
  } catch {
    return undefined;
  }
}

const COMPAT_PATHS = ["/retrieve_tools", "/describe_tools", "/call", "/exec", "/tools", "/restart", "/reinit"];

function routeName(path: string, options: ResolvedOptions): string {
  if (path === "/mcp") return "mcp";
  if (options.legacySse && path === "/sse") return "sse";
  if (options.legacySse && path === "/messages") return "messages";
  if (path === "/readyz") return "readyz";
  if (path === "/metrics") return "metrics";
  if (isUiPath(path)) return "ui";
  if (options.rest && (path === "/v1" || path.startsWith("/v1/"))) return "rest";
  if (options.compatRoutes && (COMPAT_PATHS.includes(path) || path.startsWith("/tools/") || path.startsWith("/call/"))) return "compat";
  return "other";
}

function notFound(path: string): HttpError {
  return new HttpError(
    "NOT_FOUND",
    `Nothing at ${path.slice(0, 100)}. codemux serves MCP at /mcp (Streamable HTTP) and /sse (legacy SSE), REST at /v1 (GET /v1/openapi.json describes it), and /healthz, /readyz, /metrics; the admin page is at /ui.`,
  );
}
