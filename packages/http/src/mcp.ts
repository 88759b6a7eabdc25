import { createSessionServer, openSessionServer } from "@codemux/server";
import { isInitializeRequest, isLegacyRequest, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { answerForOtherInstance, newSessionId } from "./affinity";
import { sessionFields } from "./auth/identity";
import { readJson } from "./body";
import { bridgeRequest, webRequestOf } from "./bridge";
import { legacyAtOnce } from "./era";
import type { Gateway, RequestContext } from "./context";
import { BoundedEventStore, discardJsonEventsByDefault } from "./event-store";
import { HttpError } from "./errors";
import { JsonAnswerTransport, jsonAnswersOn } from "./json-answers";
import { isModernRevision } from "./modern";
import { sendRpcError } from "./respond";
import { newSession } from "./sessions";

const SESSION_NOT_FOUND = -32001;

function sessionHeader(ctx: RequestContext): string | undefined {
  const value = ctx.req.headers["mcp-session-id"];
  return typeof value === "string" && value.length > 0 && value.length <= 200 ? value : undefined;
}

function isInitialize(body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
}

/** The ids of the requests in a POST body (notifications and responses have none to answer). */
function requestIds(body: unknown): Array<string | number> {
  const ids: Array<string | number> = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown };
    if (typeof method === "string" && (typeof id === "string" || typeof id === "number")) ids.push(id);
  }
  return ids;
}

/**
 * `/mcp`: Streamable HTTP for both protocol eras. A POST carrying the 2026-07-28 envelope is served
 * without a session (see ModernMcp); everything else is a 2025 client's: one SDK server per session
 * over the shared core, or a fresh one per POST with `--stateless`.
 */
export async function handleMcp(gateway: Gateway, ctx: RequestContext): Promise<void> {
  const method = ctx.req.method ?? "GET";
  if (method === "POST") {
    const body = await readJson(ctx.req, gateway.options.maxBodyBytes);
    ctx.rpcIds = requestIds(body);
    // The SDK's own classification (its common case told at once), so codemux and its handler never disagree on a request's era.
    const request = webRequestOf(ctx.req);
    const oneRequest = legacyAtOnce(request, body);
    if (!oneRequest && !(await isLegacyRequest(request, body))) return gateway.modern.serve(ctx, body);
    if (gateway.options.stateless) return handleStateless(gateway, ctx, { body, request });
    return handleSessionful(gateway, ctx, { body, request, oneRequest });
  }
  if ((method === "GET" || method === "DELETE") && isModernRevision(ctx.req.headers["mcp-protocol-version"])) {
    // -32600 (the request is invalid), not -32000: 2026-07-28 gives the -32000 range its own meanings (-32020 to -32022).
    throw new HttpError("METHOD_NOT_ALLOWED", "MCP 2026-07-28 has no sessions: send each request as a POST to /mcp (no GET stream, no DELETE).", {
      headers: { allow: "POST" },
      rpcCode: -32600,
    });
  }
  if (gateway.options.stateless) {
    throw new HttpError("METHOD_NOT_ALLOWED", "This server is stateless: only POST is served on /mcp (no sessions, no GET stream).", {
      headers: { allow: "POST" },
    });
  }
  if (method !== "GET" && method !== "DELETE") {
    throw new HttpError("METHOD_NOT_ALLOWED", "Use POST, GET or DELETE on /mcp.", { headers: { allow: "GET, POST, DELETE" } });
  }
  return handleSessionful(gateway, ctx, { body: undefined });
}

/** A request's parsed body and its web head, built once per POST (the era check and the SDK's transport read the same one). */
interface Post {
  body: unknown;
  request?: Request;
  /** The era check found the body to be one JSON-RPC request by the SDK's schema (see `legacyAtOnce`). */
  oneRequest?: boolean;
}

/** A 2025 client's request on its session, or the initialize that opens one. */
async function handleSessionful(gateway: Gateway, ctx: RequestContext, { body, request, oneRequest }: Post): Promise<void> {
  const method = ctx.req.method ?? "GET";
  const id = sessionHeader(ctx);
  if (id === undefined) {
    if (method === "POST" && isInitialize(body)) return openSession(gateway, ctx, { body, request });
    sendRpcError(ctx.res, 400, { code: -32000, message: "Bad Request: an Mcp-Session-Id header is required; start with an initialize request without one." });
    return;
  }
  ctx.log.session = id.slice(0, 8);
  const session = gateway.sessions.get(id, ctx.principal, ctx.identity.expiresAt);
  if (!session || session.kind !== "streamable") {
    if (await answerForOtherInstance(ctx, { id, body, scaleOut: gateway.options.scaleOut })) return;
    // Unknown, expired, or another principal's: the same 404, so a client re-initializes and nothing leaks.
    sendRpcError(ctx.res, 404, { code: SESSION_NOT_FOUND, message: "Session not found" });
    return;
  }
  if (method === "GET") gateway.sessions.touch(session);
  else ctx.res.once("close", gateway.sessions.begin(session));
  const transport = session.transport as WebStandardStreamableHTTPServerTransport;
  await bridgeRequest(transport, {
    req: ctx.req,
    res: ctx.res,
    body,
    ...(request ? { request } : {}),
    ...(oneRequest ? { oneRequest } : {}),
    ...eventsOf(transport),
  });
}

/** Each session's event store, when answers sent as plain JSON discard their events (`CODEMUX_JSON_EVENTS` is not `keep`). */
const jsonEvents = new WeakMap<object, BoundedEventStore>();
const eventsOf = (transport: object): { events?: BoundedEventStore } => {
  const events = jsonEvents.get(transport);
  return events ? { events } : {};
};

async function openSession(gateway: Gateway, ctx: RequestContext, { body, request }: Post): Promise<void> {
  gateway.sessions.reserve(ctx.principal);
  const id = newSessionId(gateway.options.scaleOut);
  ctx.log.session = id.slice(0, 8);
  let added = false;
  const { server, connect } = openSessionServer(gateway.core.sessions, {
    session: { id, ...sessionFields(ctx.identity) },
    ...(gateway.options.mode ? { mode: gateway.options.mode } : {}),
  });
  // A client that lost its stream resumes with Last-Event-ID; bounded per session.
  const events = new BoundedEventStore({ maxEvents: 1000, maxBytes: gateway.options.eventStoreBytes });
  const Transport = jsonAnswersOn() ? JsonAnswerTransport : WebStandardStreamableHTTPServerTransport;
  const transport = new Transport({
    sessionIdGenerator: () => id,
    keepAliveMs: gateway.options.keepAliveMs,
    eventStore: events,
    onsessioninitialized: () => {
      added = true;
      gateway.sessions.add(session);
    },
  });
  const session = newSession({ id, kind: "streamable", transport, server }, ctx.identity);
  if (discardJsonEventsByDefault()) jsonEvents.set(transport, events);
  // Set before connect: the SDK chains it with its own close handling.
  transport.onclose = () => gateway.sessions.delete(id);
  server.onerror = (error) => gateway.warn("mcp protocol error", { session: id.slice(0, 8), error: error.message.slice(0, 300) });
  const lane = await connect(transport);
  if (lane) session.lane = lane;
  const end = gateway.sessions.begin(session);
  ctx.res.once("close", end);
  try {
    await bridgeRequest(transport, { req: ctx.req, res: ctx.res, body, ...(request ? { request } : {}), ...eventsOf(transport) });
  } finally {
    if (!added) {
      gateway.sessions.release(ctx.principal);
      await transport.close().catch(() => undefined);
    }
  }
}

/** `--stateless`: a fresh transport and server per POST, running as the principal's one session. */
async function handleStateless(gateway: Gateway, ctx: RequestContext, { body, request }: Post): Promise<void> {
  const server = createSessionServer(gateway.core.sessions, {
    session: gateway.principalSession(ctx.identity),
    endsWithServer: false,
    ...(gateway.options.mode ? { mode: gateway.options.mode } : {}),
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  ctx.res.once("close", () => {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  await server.connect(transport);
  await bridgeRequest(transport, { req: ctx.req, res: ctx.res, body, ...(request ? { request } : {}) });
}
