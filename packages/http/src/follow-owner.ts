import { isSharedStateDown } from "@codemux/core";
import { parkInstanceOf } from "@codemux/server";
import { forward, ownerAddress } from "./affinity";
import type { RequestContext } from "./context";
import type { ScaleOut } from "./scale-out";

/** The 2026-07-28 methods that name a task, whose questions and live call only its instance holds. */
const TASK_METHODS = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);
/** The 2026-07-28 methods whose retry may name a request parked on a 2025 server's question. */
const PARKING_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);
/** The owner answers a 2026-07-28 request whole, once its call ends: as long as a retried call may run (the client's close ends it sooner). */
const ANSWER_WITHIN_MS = 15 * 60_000;
/** Longer than any task id codemux makes; a longer one is not looked up (the owner refuses it the same way). */
const MAX_TASK_ID_CHARS = 100;

/**
 * A 2026-07-28 request for state another live instance holds, forwarded there: a retry whose requestState
 * names a call parked there, or a task request for a task running there. The owner checks the caller (the
 * state's MAC, the task's principal); this instance only routes, and to an address from the registry only.
 * False when this instance answers: nothing to route, the owner gone, or the request forwarded once already.
 */
export async function forwardToOwner(
  ctx: RequestContext,
  body: unknown,
  { scaleOut, local }: { scaleOut: ScaleOut | undefined; local: () => Promise<void> },
): Promise<boolean> {
  if (!scaleOut?.instances) return false;
  const owner = await ownerOf(ctx.principal, body, scaleOut);
  if (owner === undefined) return false;
  const address = await ownerAddress(ctx, owner, scaleOut);
  if (address === undefined) return false;
  ctx.log.forwardedTo = owner;
  // Its address answered no more: it died before its registration expired, so this instance answers as when it is gone.
  await forward(ctx, { target: `${address}${ctx.req.url ?? "/mcp"}`, body, self: scaleOut.instanceId, gone: local, answerWithinMs: ANSWER_WITHIN_MS });
  return true;
}

/** The instance a request's state lives on, by the request's own words (bounded) for a park, by the shared record for a task. */
async function ownerOf(principal: string, body: unknown, scaleOut: ScaleOut): Promise<string | undefined> {
  const { method, params } = (body ?? {}) as { method?: unknown; params?: { requestState?: unknown; taskId?: unknown } };
  if (typeof params !== "object" || params === null) return undefined;
  if (typeof method === "string" && PARKING_METHODS.has(method)) return parkInstanceOf(params.requestState);
  if (typeof method !== "string" || !TASK_METHODS.has(method) || !scaleOut.taskOwner) return undefined;
  const { taskId } = params;
  if (typeof taskId !== "string" || taskId.length > MAX_TASK_ID_CHARS) return undefined;
  // Redis down: answered here, where a task this instance runs needs no shared state.
  return scaleOut.taskOwner(principal, taskId).catch((error: unknown) => {
    if (isSharedStateDown(error)) return undefined;
    throw error;
  });
}
