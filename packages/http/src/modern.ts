import { createSessionServer } from "@codemux/server";
import { createMcpHandler, type AuthInfo, type McpHttpHandler, type McpRequestContext, type Server } from "@modelcontextprotocol/server";
import type { Identity } from "./auth/identity";
import { webRequestOf, writeResponse } from "./bridge";
import type { Gateway, HttpCore, RequestContext } from "./context";
import { ListenLimitError } from "./errors";
import { forwardToOwner } from "./follow-owner";
import { ListenBus } from "./listen-bus";
import { HEADER_MISMATCH, paramHeaderMismatch } from "./param-headers";
import { sendJson } from "./respond";
import type { ScaleOut } from "./scale-out";

/** The first protocol revision served without sessions; a GET or DELETE naming it (or a later one) asks for what that era has not. */
export const FIRST_MODERN_REVISION = "2026-07-28";

/** Whether an `MCP-Protocol-Version` header names the 2026-07-28 revision or a later one. */
export function isModernRevision(header: string | string[] | undefined): boolean {
  return typeof header === "string" && /^\d{4}-\d{2}-\d{2}$/.test(header) && header >= FIRST_MODERN_REVISION;
}

/** What the modern leg needs of the gateway, and how many listen streams a principal may hold (as many as sessions). */
export type ModernGateway = Pick<Gateway, "core" | "options" | "principalSession" | "warn"> & { maxListensPerPrincipal: (principal: string) => number };

/**
 * MCP 2026-07-28 clients on `/mcp`: no sessions; each request is answered by its own server, built
 * over the principal's one session (as `--stateless` runs), behind the SDK's modern handler, which
 * answers `server/discover`, checks the routing headers and the envelope, and serves listen streams.
 */
export class ModernMcp {
  readonly #handler: McpHttpHandler;
  readonly #core: HttpCore;
  /** Servers built for requests and not yet closed: each must end with its request. */
  #alive = 0;
  readonly #built = new WeakMap<Request, Server>();
  /** The open listen streams, each ended by aborting its request. */
  readonly #listens = new Set<AbortController>();
  /** Open listen streams per principal: each holds a connection and a bus listener, so one principal's are bounded. */
  readonly #listening = new Map<string, number>();
  readonly #maxListens: (principal: string) => number;
  /** Whose each listen stream is: an isolated server's instance's changes go to its owner's streams alone. */
  readonly #bus = new ListenBus();
  readonly #stopToolChanges: () => void;
  readonly #stopChanges: () => void;
  readonly #scaleOut: ScaleOut | undefined;
  readonly #mode: string | undefined;
  readonly #principalSession: ModernGateway["principalSession"];

  constructor(gateway: ModernGateway) {
    this.#core = gateway.core;
    this.#mode = gateway.options.mode;
    this.#principalSession = (identity) => gateway.principalSession(identity);
    this.#scaleOut = gateway.options.scaleOut;
    this.#maxListens = gateway.maxListensPerPrincipal;
    const { mode, keepAliveMs, maxBodyBytes, maxSessions } = gateway.options;
    this.#handler = createMcpHandler((ctx) => this.#server(gateway, ctx), {
      legacy: "reject",
      keepAliveMs,
      maxRequestBodySize: maxBodyBytes,
      maxSubscriptions: maxSessions,
      bus: this.#bus,
      onerror: (error) => gateway.warn("mcp 2026-07-28 request refused or failed", { error: error.message.slice(0, 300) }),
    });
    // Per-request servers cannot push: a change of the tool list reaches the clients listening for it through the handler's bus.
    this.#stopToolChanges = gateway.core.surface(mode).listChanges
      ? gateway.core.onToolsChanged(() => this.#bus.publish({ kind: "tools_list_changed" }))
      : () => undefined;
    // So are the servers' resource and prompt list changes and resource updates (a client hears only what its listen filter names).
    this.#stopChanges = gateway.core.sessions.features.onChange((change, owner) => {
      if (change.kind === "resources") this.#bus.publish({ kind: "resources_list_changed" }, owner);
      else if (change.kind === "prompts") this.#bus.publish({ kind: "prompts_list_changed" }, owner);
      else this.#bus.publish({ kind: "resource_updated", uri: change.uri }, owner);
    });
  }

  /** Servers built for requests still being answered (each lives as long as its request). */
  get alive(): number {
    return this.#alive;
  }

  /** Listen streams open now (a POST answered by a stream that stays open). */
  get listening(): number {
    return this.#listens.size;
  }

  /** Answers one POST whose body carries the 2026-07-28 envelope (auth, Host, Origin and the body bound already passed). */
  async serve(ctx: RequestContext, body: unknown): Promise<void> {
    const mismatch = this.#paramHeaderMismatch(ctx, body);
    if (mismatch !== undefined) {
      sendJson(ctx.res, 400, { jsonrpc: "2.0", id: (body as { id?: unknown }).id ?? null, error: { code: HEADER_MISMATCH, message: mismatch } });
      return;
    }
    const here = () => this.#serveHere(ctx, body);
    // A parked call's retry, or a task's request, is answered by the instance holding that call or task.
    if (!(await forwardToOwner(ctx, body, { scaleOut: this.#scaleOut, local: here }))) await here();
  }

  async #serveHere(ctx: RequestContext, body: unknown): Promise<void> {
    const closed = new AbortController();
    ctx.res.once("close", () => closed.abort());
    const listen = (body as { method?: unknown } | undefined)?.method === "subscriptions/listen";
    if (listen) this.#holdListen(ctx, closed);
    const request = webRequestOf(ctx.req, closed.signal);
    const fetch = () => this.#handler.fetch(request, { parsedBody: body, authInfo: authInfoOf(ctx.identity) });
    // A listen stream is its principal's session's: it hears that session's isolated instances too.
    const session = listen ? this.#principalSession(ctx.identity) : undefined;
    const owner = session && { principal: session.principal, session: session.id };
    const response = await (owner ? this.#bus.opening(owner, fetch) : fetch());
    const server = this.#built.get(request);
    // A listen request's server is built only for its capabilities and never connected, so closing it would not end it.
    if (server && !server.transport) server.onclose?.();
    await writeResponse({ req: ctx.req, res: ctx.res }, response);
  }

  /**
   * In passthrough, a downstream tool is listed with its own input schema: a parameter it marks with `x-mcp-header` must
   * come as its `Mcp-Param-*` header too, agreeing with the body (SEP-2243), or the call is refused with 400 / -32020
   * before it goes anywhere. The SDK's handler checks the standard headers; these it cannot, as it knows no tool.
   */
  #paramHeaderMismatch(ctx: RequestContext, body: unknown): string | undefined {
    const { method, params } = body as { method?: unknown; params?: { name?: unknown; arguments?: unknown } };
    if (method !== "tools/call" || typeof params?.name !== "string" || this.#core.surface(this.#mode).name !== "passthrough") return undefined;
    const tool = this.#core.tools(this.#principalSession(ctx.identity)).get(params.name)?.tool;
    return tool && paramHeaderMismatch(tool.inputSchema, params.arguments, ctx.req.headers);
  }

  /** Counts a listen stream against its principal until its response closes; refuses one past the principal's limit. */
  #holdListen(ctx: RequestContext, closed: AbortController): void {
    const { principal } = ctx;
    const held = this.#listening.get(principal) ?? 0;
    const max = this.#maxListens(principal);
    if (held >= max) throw new ListenLimitError(principal, max);
    this.#listening.set(principal, held + 1);
    this.#listens.add(closed);
    ctx.res.once("close", () => {
      this.#listens.delete(closed);
      const left = (this.#listening.get(principal) ?? 1) - 1;
      if (left > 0) this.#listening.set(principal, left);
      else this.#listening.delete(principal);
    });
  }

  /** Ends the open listen streams (shutdown): unlike calls, they would otherwise run through the whole grace. */
  endListens(): void {
    for (const listen of this.#listens) listen.abort();
  }

  async close(): Promise<void> {
    this.#stopToolChanges();
    this.#stopChanges();
    await this.#handler.close();
  }

  #server(gateway: ModernGateway, ctx: McpRequestContext): Server {
    const identity = ctx.authInfo?.extra?.identity as Identity | undefined;
    // The gateway authenticated every request before this: a missing identity is a bug, never an anonymous caller.
    if (!identity) throw new Error("a 2026-07-28 request reached the MCP handler without an identity");
    const server = createSessionServer(gateway.core.sessions, {
      era: "modern",
      session: gateway.principalSession(identity),
      endsWithServer: false,
      ...(gateway.options.mode ? { mode: gateway.options.mode } : {}),
    });
    this.#alive++;
    const end = server.onclose;
    let ended = false;
    server.onclose = () => {
      if (ended) return;
      ended = true;
      this.#alive--;
      end?.();
    };
    if (ctx.requestInfo) this.#built.set(ctx.requestInfo, server);
    return server;
  }
}

/** The request's identity for the SDK's handler and the server factory; the credential itself stays with the gateway. */
function authInfoOf(identity: Identity): AuthInfo {
  return {
    token: "",
    clientId: identity.principal,
    scopes: [...(identity.scopes ?? [])],
    ...(identity.expiresAt !== undefined ? { expiresAt: Math.floor(identity.expiresAt / 1000) } : {}),
    extra: { identity },
  };
}
