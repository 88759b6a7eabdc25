import type { ServerRequestRelay } from "@codemux/pool";
import { ErrorCode, McpError, type ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { SessionInfo, ToolCallMiddleware } from "./pipeline/context";

/** What each server-to-client request needs the client to have declared. */
const NEEDS: Record<string, keyof ClientCapabilities> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

/**
 * Routes requests that downstream servers send to "their client" (sampling, elicitation, roots) to the
 * client session whose call caused them: the session with a call in flight on that server. One
 * downstream connection serves many clients, and a request carries no mark of the call behind it, so
 * when calls of several sessions are in flight on the server at once the request is refused rather
 * than risk showing one client another's prompt. Roots asked for outside any call go to the only
 * connected client that has roots, and are refused when there are several.
 */
export class ClientRelay implements ServerRequestRelay {
  readonly capabilities: ClientCapabilities = { sampling: {}, elicitation: {}, roots: { listChanged: true } };
  readonly #sessions = new Map<string, SessionInfo>();
  /** server -> session id -> calls in flight */
  readonly #inflight = new Map<string, Map<string, number>>();

  /** A connected MCP client session; returns the function that forgets it. */
  register(session: SessionInfo): () => void {
    this.#sessions.set(session.id, session);
    return () => this.#sessions.delete(session.id);
  }

  /** Connected sessions, for notifications to all of them. */
  sessions(): SessionInfo[] {
    return [...this.#sessions.values()];
  }

  /** Counts each call in flight per server and session, so a request from the server can be routed to its caller. */
  middleware(): ToolCallMiddleware {
    return async (ctx, next) => {
      const server = ctx.entry.server;
      const counts = this.#inflight.get(server) ?? new Map<string, number>();
      this.#inflight.set(server, counts);
      counts.set(ctx.session.id, (counts.get(ctx.session.id) ?? 0) + 1);
      try {
        return await next(ctx);
      } finally {
        const left = (counts.get(ctx.session.id) ?? 1) - 1;
        if (left > 0) counts.set(ctx.session.id, left);
        else counts.delete(ctx.session.id);
      }
    };
  }

  async handle(server: string, request: { method: string; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Record<string, unknown>> {
    const session = this.#route(server, request.method);
    const peer = session.peer;
    const capability = NEEDS[request.method];
    if (!peer || !capability || !peer.capabilities()?.[capability]) {
      throw new McpError(ErrorCode.InvalidRequest, `The client that called ${server} does not support ${request.method}; codemux cannot ask it.`);
    }
    const params = (request.params ?? {}) as never;
    switch (request.method) {
      case "sampling/createMessage":
        return (await peer.createMessage(params, { signal })) as Record<string, unknown>;
      case "elicitation/create":
        return (await peer.elicit(params, { signal })) as Record<string, unknown>;
      default:
        return (await peer.listRoots({ signal })) as Record<string, unknown>;
    }
  }

  #route(server: string, method: string): SessionInfo {
    const callers = [...(this.#inflight.get(server)?.keys() ?? [])];
    if (callers.length === 1) {
      const session = this.#sessions.get(callers[0] as string);
      if (session) return session;
    }
    if (callers.length > 1) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${server} sent ${method} while calls of ${callers.length} clients were in flight on it; codemux cannot tell which client it is for, so it refuses rather than ask the wrong one.`,
      );
    }
    const capability = NEEDS[method];
    const able = this.sessions().filter((s) => capability && s.peer?.capabilities()?.[capability]);
    if (method === "roots/list" && able.length === 1) return able[0] as SessionInfo;
    throw new McpError(
      ErrorCode.InvalidRequest,
      `${server} sent ${method} outside any call${able.length > 1 ? " while several clients are connected" : " and no connected client can answer it"}.`,
    );
  }
}
