import type { CallRequest, ClientPeer, DownstreamTaskHandling, RequestContext, ToolResult } from "@codemux/core";
import { limitResult } from "./render/limit-result";
import type { CodemuxServices } from "./services";

/** What the middleware sees as the answer of a call whose server's task codemux took: the task's result comes later, through `followed`. */
const TAKEN: ToolResult = { content: [{ type: "text", text: "The server answered with a task; codemux follows it as a task of its own." }] };

/**
 * How a client's direct call (passthrough) treats a 2026-07-28 server's task. A 2026 client that declared
 * the Tasks extension takes it: codemux makes a task of its own (a job of kind `task`) that follows the
 * server's, runs its result through the same middleware as a call's, and answers the request with that
 * task. A 2026 client that did not declare it is not declared for (a server that needs it answers -32021,
 * passed up). Any other caller (a 2025 client, a snippet, a job) gets the task followed inside the call.
 */
export function downstreamTaskHandling(services: CodemuxServices, call: CallRequest, request: RequestContext): DownstreamTaskHandling | undefined {
  if (request.session.peer?.era !== "modern") return undefined;
  const takeTask = request.takeTask;
  if (!takeTask) return "undeclared";
  return {
    take: async (follow) => {
      await takeTask(async ({ signal, progress, peer }) => {
        const followed = { ...call, session: { ...request.session, peer }, signal, progress };
        const result = await services.pipeline.followed(followed, () => follow({ signal, onprogress: progress, ask: askOf(peer) }));
        return limitResult(services, { tool: call.name, result, owner: request.session });
      });
      return TAKEN;
    },
  };
}

/** A server's question during its task, asked of the task's client (its questions become the task's inputRequests). */
function askOf(peer: ClientPeer) {
  return async (request: { method: string; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Record<string, unknown>> => {
    const params = request.params ?? {};
    switch (request.method) {
      case "elicitation/create":
        return (await peer.elicit(params, { signal })) as Record<string, unknown>;
      case "sampling/createMessage":
        return (await peer.createMessage(params, { signal })) as Record<string, unknown>;
      case "roots/list":
        return (await peer.listRoots({ signal })) as Record<string, unknown>;
      default:
        throw new Error(`A task's question of method ${request.method.slice(0, 100)} cannot be asked of a client.`);
    }
  };
}
