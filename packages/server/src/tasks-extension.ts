import { declaresTasks, TASKS_EXTENSION, type ClientCapabilities, type TaskExtensionStore, type TaskStore } from "@codemux/core";
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolRequest,
  type CallToolResult,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { errorResult } from "./render/text";
import { serveTasks, TASKS_CAPABILITY } from "./tasks";

/** MissingRequiredClientCapability (2026-07-28): the request needs a capability it did not declare. */
const MISSING_CAPABILITY = -32021;

/** Longer than any task id codemux makes (`job_` and 12 hex digits); a longer one is refused before any lookup. */
const MAX_TASK_ID_CHARS = 100;
const TaskIdParams = z.looseObject({ taskId: z.string().max(MAX_TASK_ID_CHARS) });

/** The meta-tools whose call becomes a task when the caller hints `background: true` (the hint that asks for a job today). */
const TASK_ON_HINT = new Set(["execute_code", "call_tool"]);
/** The meta-tools that always become a task: the agent's loop lasts many model turns, each a question to the client. */
const TASK_ALWAYS = new Set(["agent"]);

/**
 * What a session declares for tasks: the 2025-11-25 `tasks` capability to a 2025 client, the
 * `io.modelcontextprotocol/tasks` extension to a 2026-07-28 one (never both: SEP-2663 forbids the old capability there).
 */
export function taskCapabilities(modern: boolean, store: TaskStore | undefined): Record<string, unknown> {
  if (!store) return {};
  if (!modern) return { tasks: TASKS_CAPABILITY };
  return store.extension ? { extensions: { [TASKS_EXTENSION]: {} } } : {};
}

/** Serves the task methods of the session's era: 2025-11-25's four, or the extension's `tasks/get`, `tasks/update` and `tasks/cancel`. */
export function serveTaskMethods(server: Server, modern: boolean, store: TaskStore | undefined): void {
  if (!store) return;
  if (!modern) serveTasks(server, store);
  else if (store.extension) serveTasksExtension(server, store.extension);
}

/**
 * Answers a 2026-07-28 `tools/call` with a task (`resultType: "task"`) when the request declared the
 * Tasks extension and the call is long: `execute_code` or `call_tool` with `background: true`, or
 * `agent`. The task runs the call without the hint, so its result is what the call would have
 * answered in the foreground. Undefined when the call is answered as usual.
 */
export function answerAsTask(
  store: TaskExtensionStore | undefined,
  params: CallToolRequest["params"],
  capabilities: ClientCapabilities | undefined,
): Promise<CallToolResult> | undefined {
  if (!store || !declaresTasks(capabilities)) return undefined;
  const { background, ...args } = (params.arguments ?? {}) as Record<string, unknown>;
  if (!TASK_ALWAYS.has(params.name) && !(TASK_ON_HINT.has(params.name) && background === true)) return undefined;
  return store.createTask({ name: params.name, arguments: args, capabilities }).then(
    (task) => ({ resultType: "task", ...task }) as unknown as CallToolResult,
    // A task refused (the principal's jobs at their limit, codemux shutting down) is the call's error result, as a refused job is.
    (error: unknown) => errorResult(error) as CallToolResult,
  );
}

/** `tasks/get`, `tasks/update` and `tasks/cancel` of the extension; a task of another principal is as unknown as a missing one. */
function serveTasksExtension(server: Server, store: TaskExtensionStore): void {
  const unknown = (taskId: string) =>
    new ProtocolError(ProtocolErrorCode.InvalidParams, `No task "${taskId}" for this client: it may have expired, or it was never made by this principal.`);
  server.setRequestHandler("tasks/get", { params: TaskIdParams }, async ({ taskId }, ctx) => {
    requireExtension("tasks/get", ctx);
    const task = await store.getTask(taskId);
    if (!task) throw unknown(taskId);
    return task as never;
  });
  // The SDK lifts `inputResponses` out of the params (as for a retried call): they are read from the request's context.
  server.setRequestHandler("tasks/update", { params: TaskIdParams }, async ({ taskId }, ctx) => {
    requireExtension("tasks/update", ctx);
    const updated = await store.updateTask(taskId, ctx.mcpReq.inputResponses ?? {});
    if (updated === false) throw unknown(taskId);
    // Never acknowledged: the answers would be lost here (on Redis the HTTP layer forwards it to the live instance running the task, so this is a gone one or another process).
    if (updated !== true)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Task "${taskId}" runs on codemux ${updated.runsOn.slice(0, 100)}, which holds its questions; nothing was answered. Send tasks/update to that instance (behind a load balancer, route this client there).`,
      );
    return {};
  });
  server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async ({ taskId }, ctx) => {
    requireExtension("tasks/cancel", ctx);
    if (!(await store.cancelTask(taskId))) throw unknown(taskId);
    return {};
  });
}

/** SEP-2663: a tasks method from a request that does not declare the extension is refused with -32021, naming what it lacks. */
function requireExtension(method: string, ctx: ServerContext): void {
  const declared = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  if (declaresTasks(declared)) return;
  throw new ProtocolError(
    MISSING_CAPABILITY,
    `${method} needs the ${TASKS_EXTENSION} extension, which this request does not declare in its client capabilities.`,
    {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    },
  );
}
