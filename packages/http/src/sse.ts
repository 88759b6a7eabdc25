import { createSessionServer } from "@codemux/server";
// The old HTTP+SSE transport is in SDK v2's frozen legacy package only; kept for clients that still speak it.
import { SSEServerTransport } from "@modelcontextprotocol/server-legacy/sse";
import type { ServerResponse } from "node:http";
import { answerForOtherInstance, newSessionId } from "./affinity";
import { sessionFields } from "./auth/identity";
import { readJson } from "./body";
import type { Gateway, RequestContext } from "./context";
import { HttpError } from "./errors";
import { sendRpcError } from "./respond";
import { newSession } from "./sessions";

/** What a client whose legacy session is unknown or gone must do. */
const REOPEN = "Open a new stream with GET /sse.";

/**
 * The legacy transport with the session id codemux gives it (`<instanceId>.<uuid>` behind a load balancer,
 * which routes `/messages?sessionId=` on its prefix). The SDK's frozen package draws its own id in the
 * constructor and writes it into the `endpoint` event at start, with no option to pass one, so its private
 * field is set here before start, and checked: a later package that moved it fails every new stream loudly.
 */
class InstanceSseTransport extends SSEServerTransport {
  constructor(endpoint: string, res: ServerResponse, id: string) {
    super(endpoint, res);
    (this as unknown as { _sessionId: string })._sessionId = id;
    if (this.sessionId !== id) throw new Error("The legacy SSE transport no longer keeps its id in _sessionId: InstanceSseTransport needs updating.");
  }
}

/** `GET /sse`: a legacy HTTP+SSE session; the client posts its messages to the endpoint it is sent. */
export async function openSseSession(gateway: Gateway, ctx: RequestContext): Promise<void> {
  if (ctx.req.method !== "GET")
    throw new HttpError("METHOD_NOT_ALLOWED", "Use GET on /sse to open the stream; messages go to POST /messages.", { headers: { allow: "GET" } });
  // A client that authenticated with ?apikey= must send its messages the same way (it cannot add headers).
  const endpoint = ctx.queryToken ? `/messages?apikey=${encodeURIComponent(ctx.queryToken)}` : "/messages";
  const id = newSessionId(gateway.options.scaleOut);
  // Made before the place is taken: it writes nothing until start, and a failed check must not hold a place.
  const transport = new InstanceSseTransport(endpoint, ctx.res, id);
  gateway.sessions.reserve(ctx.principal);
  ctx.log.session = id.slice(0, 8);
  const server = createSessionServer(gateway.core, {
    session: { id, ...sessionFields(ctx.identity) },
    ...(gateway.options.mode ? { mode: gateway.options.mode } : {}),
  });
  const session = newSession({ id, kind: "sse", transport, server }, ctx.identity);
  gateway.sessions.add(session);
  const keepAlive =
    gateway.options.keepAliveMs > 0
      ? setInterval(() => {
          if (!ctx.res.writableEnded) ctx.res.write(": keep-alive\n\n");
        }, gateway.options.keepAliveMs)
      : undefined;
  keepAlive?.unref();
  transport.onclose = () => gateway.sessions.delete(id);
  ctx.res.once("close", () => {
    clearInterval(keepAlive);
    gateway.sessions.delete(id);
    void server.close().catch(() => undefined);
  });
  server.onerror = (error) => gateway.warn("mcp protocol error", { session: id.slice(0, 8), error: error.message.slice(0, 300) });
  await server.connect(transport);
}

/** `POST /messages?sessionId=`: one message of a legacy SSE session, from the principal that opened it. */
export async function postSseMessage(gateway: Gateway, ctx: RequestContext): Promise<void> {
  if (ctx.req.method !== "POST") throw new HttpError("METHOD_NOT_ALLOWED", "Use POST on /messages.", { headers: { allow: "POST" } });
  const id = ctx.url.searchParams.get("sessionId") ?? "";
  ctx.log.session = id.slice(0, 8);
  const body = await readJson(ctx.req, gateway.options.maxBodyBytes);
  const session = id ? gateway.sessions.get(id, ctx.principal, ctx.identity.expiresAt) : undefined;
  if (!session || session.kind !== "sse") {
    // Another instance's session: forwarded there, or "gone" when it is.
    if (id && (await answerForOtherInstance(ctx, { id, body, scaleOut: gateway.options.scaleOut, reopen: REOPEN }))) return;
    sendRpcError(ctx.res, 404, { code: -32001, message: "Session not found: open a new stream with GET /sse." });
    return;
  }
  const end = gateway.sessions.begin(session);
  ctx.res.once("close", end);
  await (session.transport as SSEServerTransport).handlePostMessage(ctx.req, ctx.res, body);
}
