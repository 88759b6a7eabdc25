#!/usr/bin/env node
/**
 * A 2026-07-28 server on SDK v2 (stdio, modern only) that answers calls with tasks of the
 * `io.modelcontextprotocol/tasks` extension when the request declares it: `work` finishes after
 * `ms`, `confirm` waits on an elicitation answered through `tasks/update`, `fail` fails with a
 * JSON-RPC error, `cancelled` reports the tasks cancelled through `tasks/cancel`. Without the
 * extension, `work` answers at once and `confirm` refuses with -32021, as SEP-2663 says.
 */
import { ProtocolError, Server, type CallToolResult, type ServerContext, type Tool } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const TASKS = "io.modelcontextprotocol/tasks";
const MISSING_CAPABILITY = -32021;

interface TaskState {
  taskId: string;
  status: "working" | "input_required" | "completed" | "failed" | "cancelled";
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
  result?: CallToolResult;
  error?: { code: number; message: string };
  timer?: NodeJS.Timeout;
}

const tasks = new Map<string, TaskState>();
const cancelled: string[] = [];
let made = 0;

const tools: Tool[] = [
  {
    name: "work",
    description: "Work for ms milliseconds (a task when the client declared the extension), then answer with the text.",
    inputSchema: { type: "object", properties: { ms: { type: "number" }, text: { type: "string" }, steps: { type: "number" } } },
  },
  {
    name: "confirm",
    description: "Ask the user to confirm (inside a task), then answer with the answer.",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
  {
    name: "fail",
    description: "A task that fails with a JSON-RPC error carrying the message.",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
  { name: "cancelled", description: "The ids of the tasks cancelled through tasks/cancel, in order.", inputSchema: { type: "object", properties: {} } },
];

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
const now = () => new Date().toISOString();

function declared(ctx: ServerContext): boolean {
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.["io.modelcontextprotocol/clientCapabilities"] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return Boolean(capabilities?.extensions?.[TASKS]);
}

function settle(task: TaskState, change: Partial<TaskState>): void {
  Object.assign(task, change, { lastUpdatedAt: now() });
}

/** The task as `tasks/get` shows it (a DetailedTask: its questions, result or error). */
function shown(task: TaskState): Record<string, unknown> {
  const { timer: _, ...wire } = task;
  return { ...wire, ttlMs: 60_000, pollIntervalMs: 50 };
}

/** The task as a CreateTaskResult: a plain Task, whose questions, result or error only tasks/get shows. */
function created(task: TaskState): CallToolResult {
  const { taskId, status, createdAt, lastUpdatedAt } = task;
  return { resultType: "task", taskId, status, createdAt, lastUpdatedAt, ttlMs: 60_000, pollIntervalMs: 50 } as unknown as CallToolResult;
}

function newTask(): TaskState {
  const task: TaskState = { taskId: `task-${process.pid}-${++made}`, status: "working", createdAt: now(), lastUpdatedAt: now() };
  tasks.set(task.taskId, task);
  return task;
}

function makeServer(): Server {
  const server = new Server({ name: "tasks", version: "2.0.0" }, { capabilities: { tools: {}, extensions: { [TASKS]: {} } } });
  server.setRequestHandler("tools/list", async () => ({ tools }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const withTask = declared(ctx);
    switch (request.params.name) {
      case "work": {
        if (!withTask) return text(`direct: ${String(args.text)}`);
        const task = newTask();
        const ms = Number(args.ms ?? 0);
        const steps = Number(args.steps ?? 0);
        // A status message at each step, as a server reports how far it got.
        for (let step = 1; step <= steps; step++)
          setTimeout(() => task.status === "working" && settle(task, { statusMessage: `step ${step} of ${steps}` }), (ms * step) / (steps + 1));
        task.timer = setTimeout(() => settle(task, { status: "completed", result: text(`done in task: ${String(args.text)}`) }), ms);
        return created(task);
      }
      case "confirm": {
        if (!withTask)
          throw new ProtocolError(MISSING_CAPABILITY, "Missing required client capability", { requiredCapabilities: { extensions: { [TASKS]: {} } } });
        const task = newTask();
        const params = { mode: "form", message: String(args.message), requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } } };
        settle(task, { status: "input_required", inputRequests: { confirm: { method: "elicitation/create", params } } });
        return created(task);
      }
      case "fail": {
        if (!withTask) return { ...text(String(args.message)), isError: true };
        const task = newTask();
        settle(task, { status: "failed", error: { code: -32603, message: String(args.message) } });
        return created(task);
      }
      case "cancelled":
        return text(JSON.stringify(cancelled));
      default:
        throw new ProtocolError(-32602, `Unknown tool: ${request.params.name}`);
    }
  });
  const TaskId = z.looseObject({ taskId: z.string() });
  const find = (taskId: string) => {
    const task = tasks.get(taskId);
    if (!task) throw new ProtocolError(-32602, `Unknown task: ${taskId}`);
    return task;
  };
  // As SEP-2663 says: a task method from a client that did not declare the extension on that request is refused.
  const strict = (ctx: ServerContext) => {
    if (!declared(ctx))
      throw new ProtocolError(MISSING_CAPABILITY, "Missing required client capability", { requiredCapabilities: { extensions: { [TASKS]: {} } } });
  };
  server.setRequestHandler("tasks/get", { params: TaskId }, async ({ taskId }, ctx) => {
    strict(ctx);
    return shown(find(taskId)) as never;
  });
  server.setRequestHandler("tasks/update", { params: TaskId }, async ({ taskId }, ctx) => {
    strict(ctx);
    const task = find(taskId);
    const answer = ctx.mcpReq.inputResponses?.confirm;
    if (task.status === "input_required" && answer !== undefined) {
      delete task.inputRequests;
      settle(task, { status: "completed", result: text(`answered: ${JSON.stringify(answer)}`) });
    }
    return {};
  });
  server.setRequestHandler("tasks/cancel", { params: TaskId }, async ({ taskId }, ctx) => {
    strict(ctx);
    const task = find(taskId);
    clearTimeout(task.timer);
    cancelled.push(taskId);
    if (task.status === "working" || task.status === "input_required") settle(task, { status: "cancelled" });
    return {};
  });
  return server;
}

serveStdio(() => makeServer(), { legacy: "reject" });
process.stdin.once("end", () => process.exit(0));
