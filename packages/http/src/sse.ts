import { openSessionServer } from "@codemux/server";
import { answerForOtherInstance, newSessionId } from "./affinity";
import { sessionFields } from "./auth/identity";
import { readJson } from "./body";
import type { Gateway, RequestContext } from "./context";
import { HttpError } from "./errors";
import { sendRpcError } from "./respond";
import { newSession } from "./sessions";
import { SseServerTransport } from "./sse-transport";

/** What a client whose legacy session is unknown or gone must do. */
const REOPEN = "Open a new stream with GET /sse.";

/** `GET /sse`: a legacy HTTP+SSE session; the client posts its messages to the endpoint it is sent. */
export async function openSseSession(gateway: Gateway, ctx: RequestContext): Promise<void> {
  if (ctx.req.method !== "GET")
    throw new HttpError("METHOD_NOT_ALLOWED", "Use GET on /sse to open the stream; messages go to POST /messages.", { headers: { allow: "GET" } });
  // A client that authenticated with ?apikey= must send its messages the same way (it cannot add headers).
  const endpoint = ctx.queryToken ? `/messages?apikey=${encodeURIComponent(ctx.queryToken)}` : "/messages";
  const id = newSessionId(gateway.options.scaleOut);
  const transport = new SseServerTransport({ endpoint, stream: ctx.res, sessionId: id });
  gateway.sessions.reserve(ctx.principal);
  ctx.log.session = id.slice(0, 8);
  const { server, connect } = openSessionServer(gateway.core.sessions, {
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
  const lane = await connect(transport);
  if (lane) session.lane = lane;
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
  (session.transport as SseServerTransport).post(body, ctx.res);
}
