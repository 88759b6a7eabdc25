import { instanceOfId, instanceScopedId } from "@codemux/core";
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { RequestContext } from "./context";
import type { Metrics } from "./metrics";
import { sendRpcError } from "./respond";
import type { ScaleOut } from "./scale-out";

/** Marks a forwarded request: the instance it reaches answers it or says the session is gone, never forwards again. */
const FORWARDED = "x-codemux-forwarded-from";
/** Request headers an MCP request needs at the instance holding its session. */
const PASSED_REQUEST = [
  "authorization",
  "accept",
  "content-type",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  "x-api-key",
  "mcp-method",
  "mcp-name",
];
/** The 2026-07-28 headers that mirror a tool's parameters (`Mcp-Param-<name>`), which the owner checks against the body. */
const PASSED_PREFIX = "mcp-param-";
/** Response headers passed back to the client. */
const PASSED_RESPONSE = ["content-type", "mcp-session-id", "retry-after", "www-authenticate"];
/** How long the owner may take to start answering a forwarded 2025-era request (it streams at once). */
const FORWARD_CONNECT_MS = 10_000;

/** A 2025-era session id of this instance (`<instanceId>.<uuid>`), or a bare uuid on a single instance. */
export function newSessionId(scaleOut: ScaleOut | undefined): string {
  return scaleOut ? instanceScopedId(scaleOut.instanceId, randomUUID()) : randomUUID();
}

/**
 * The id of the one session a principal's REST and 2026-07-28 calls run as. Random per process on one
 * instance; with shared results, the same on every instance (a hash of the principal, never sent by a
 * client), so a handle kept through one instance is read through another by its principal alone.
 */
export function principalSessionId(principal: string, scaleOut: ScaleOut | undefined): string {
  if (!scaleOut?.sharedResults) return `rest-${randomUUID()}`;
  return `rest-${createHash("sha256").update(principal).digest("hex").slice(0, 32)}`;
}

/** /readyz's account of the shared state: shown, never a reason to be unready (calls that need no shared state still work). */
export function sharedStateOf(scaleOut: ScaleOut | undefined): { instance?: string; store?: { kind: string; where: string; up: boolean } } {
  if (!scaleOut) return {};
  const { state } = scaleOut;
  return { instance: scaleOut.instanceId, ...(state ? { store: { kind: state.kind, where: state.where, up: state.up() } } : {}) };
}

/** `codemux_redis_up` (1 while the shared store answers) when there is one. */
export function sharedStateMetrics(metrics: Metrics, scaleOut: ScaleOut | undefined): void {
  const state = scaleOut?.state;
  if (!state) return;
  metrics.gauge(`codemux_${state.kind}_up`, `1 while the shared ${state.kind} store is connected, else 0.`, () => [[{}, state.up() ? 1 : 0]]);
}

/** What a 2025 Streamable HTTP client whose session is gone must do. */
const REINITIALIZE = "Start a new session with an initialize request.";

/**
 * A 2025-era request for session `id` (Streamable HTTP, or a legacy SSE `/messages` post) that this
 * instance does not hold: forwarded to the instance whose id it starts with when that one is registered,
 * else answered "gone" (404, as for an unknown session, so the client starts a new one: `reopen` says how).
 * False when the id names this instance or none: the caller answers.
 */
export async function answerForOtherInstance(
  ctx: RequestContext,
  { id, body, scaleOut, reopen = REINITIALIZE }: { id: string; body: unknown; scaleOut: ScaleOut | undefined; reopen?: string },
): Promise<boolean> {
  const owner = instanceOfId(id);
  if (!scaleOut?.instances || owner === undefined || owner === scaleOut.instanceId) return false;
  const gone = { owner, reopen };
  const address = await ownerAddress(ctx, owner, scaleOut);
  if (address === undefined) {
    sendGone(ctx, gone);
    return true;
  }
  ctx.log.forwardedTo = owner;
  await forward(ctx, { target: `${address}${ctx.req.url ?? "/mcp"}`, body, self: scaleOut.instanceId, gone: () => sendGone(ctx, gone) });
  return true;
}

/** The address of live instance `owner` when a request should go there: not this instance, and not a request forwarded once already. */
export async function ownerAddress(ctx: RequestContext, owner: string, scaleOut: ScaleOut | undefined): Promise<string | undefined> {
  if (!scaleOut?.instances || owner === scaleOut.instanceId || ctx.req.headers[FORWARDED] !== undefined) return undefined;
  return scaleOut.instances.addressOf(owner);
}

function sendGone(ctx: RequestContext, { owner, reopen }: { owner: string; reopen: string }): void {
  sendRpcError(ctx.res, 404, { code: -32001, message: `Session not found: the instance holding this session (${owner}) is gone. ${reopen}` });
}

/** Sends the request on to the owner and streams its answer back, ending both when either side goes; `gone` answers when nothing listens there. */
export async function forward(
  ctx: RequestContext,
  {
    target,
    body,
    self,
    gone,
    answerWithinMs = FORWARD_CONNECT_MS,
  }: { target: string; body: unknown; self: string; gone: () => void | Promise<void>; answerWithinMs?: number },
): Promise<void> {
  const abort = new AbortController();
  ctx.res.once("close", () => abort.abort());
  const connect = setTimeout(() => abort.abort(), answerWithinMs);
  let response: Response;
  try {
    response = await fetch(target, {
      method: ctx.req.method ?? "GET",
      headers: { ...passed(ctx.req), [FORWARDED]: self },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: abort.signal,
    });
  } catch (error) {
    // Nothing listens at its address: it died before its registration expired.
    if ((error as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED") return gone();
    sendRpcError(ctx.res, 502, {
      code: -32000,
      message:
        "The codemux instance holding this session, call or task did not answer; retry, or start over (a new session, the tool called again) if it keeps failing.",
    });
    return;
  } finally {
    clearTimeout(connect);
  }
  const headers: Record<string, string> = {};
  for (const name of PASSED_RESPONSE) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  ctx.res.writeHead(response.status, headers);
  if (!response.body) {
    ctx.res.end();
    return;
  }
  await new Promise<void>((resolve) => {
    const stream = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>);
    stream.on("error", () => resolve());
    stream.on("end", () => resolve());
    ctx.res.on("close", () => resolve());
    stream.pipe(ctx.res);
  });
}

function passed(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (typeof value === "string" && (PASSED_REQUEST.includes(name) || name.startsWith(PASSED_PREFIX))) headers[name] = value;
  return headers;
}
