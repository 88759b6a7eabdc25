import type { SessionInfo } from "@codemux/core";
import type { CodemuxAdmin, CodemuxCalls, CodemuxLifecycle, CodemuxQueries, SessionHost } from "@codemux/server";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Identity } from "./auth/identity";
import type { LogRecord } from "./log";
import type { Metrics } from "./metrics";
import type { ResolvedOptions } from "./options";
import type { SessionTable } from "./sessions";

/** One request as the routes see it, after the Host, Origin and auth checks. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  requestId: string;
  /** `token:<name>`, `oauth:<issuer>#<subject>`, or "anonymous" when serving without auth. */
  principal: string;
  /** The whole identity: principal, groups, scopes and when the credential expires. */
  identity: Identity;
  /** The token when it came as `?apikey=` (legacy SSE puts it in the message endpoint it hands out). */
  queryToken: string | undefined;
  /** Fields added to this request's log line (session id, tool). */
  log: LogRecord;
  /** The JSON-RPC request ids an MCP POST carries: shutdown answers each with an error if it is still running. */
  rpcIds?: Array<string | number>;
}

/**
 * What the HTTP front end uses of a core (a `Codemux` is one): MCP sessions over it (its session port), calls,
 * what is served, administration (reload, restart, forget, the login callbacks), and forgetting what the admin page recorded.
 */
export type HttpCore = CodemuxCalls & CodemuxQueries & CodemuxAdmin & Pick<CodemuxLifecycle, "onForget"> & { readonly sessions: SessionHost };

/** What the routes share: the core, the options, the sessions and the metrics. */
export interface Gateway {
  core: HttpCore;
  options: ResolvedOptions;
  sessions: SessionTable;
  metrics: Metrics;
  /** The one session a principal's REST and stateless calls run as, so their result handles are theirs alone. */
  principalSession(identity: Identity): SessionInfo;
  /** Throws the 403 unless the request's identity holds `scope`; `what` names the action in the reason. */
  requireScope(ctx: RequestContext, scope: string, what: string): void;
  /** Reports a problem of the gateway itself (not a request log line). */
  warn(message: string, fields?: LogRecord): void;
  /** Serves MCP 2026-07-28 requests on /mcp (no sessions). */
  modern: { serve(ctx: RequestContext, body: unknown): Promise<void> };
}
