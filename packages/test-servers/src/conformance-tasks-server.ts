#!/usr/bin/env node
/**
 * The tools the conformance referee's `tasks-*` scenarios call (SEP-2663), which its vendored
 * everything-server lacks: a 2026-07-28 server on SDK v2 (stdio, modern only) that codemux serves
 * beside that fixture. `greet` answers at once; `slow_compute` (a task when the request declares
 * the extension, else answered in the call), `failing_job` (a task ending in a tool error),
 * `protocol_error_job` (a task failed with a JSON-RPC error), `confirm_delete` and `multi_input`
 * (tasks that ask one and two questions, answered through `tasks/update`) and
 * `test_tool_with_task` (asks with `input_required` first, then becomes a task) are tasks; all but
 * `slow_compute` refuse a request without the extension with -32021, as SEP-2663 says; `cancellations`
 * (for codemux's tests) answers how many tasks `tasks/cancel` stopped. With
 * `--http PORT` (0 for a free one) it serves Streamable HTTP instead and prints `listening PORT`:
 * the conformance run points the referee at it directly, to show the fixture passes on its own.
 */
import { createMcpHandler, inputRequired, ProtocolError, Server, type CallToolResult, type ServerContext, type Tool } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { z } from "zod";

const TASKS = "io.modelcontextprotocol/tasks";
const MISSING_CAPABILITY = -32021;
/** The longest `slow_compute` sleeps: the referee asks for at most 60 s (a task it cancels). */
const MAX_SECONDS = 120;

interface TaskState {
  taskId: string;
  status: "working" | "input_required" | "completed" | "failed" | "cancelled";
  createdAt: string;
  lastUpdatedAt: string;
  inputRequests?: Record<string, unknown>;
  /** What the answers to the task's questions become, once all are in. */
  answered?: (answers: Record<string, unknown>) => CallToolResult;
  answers?: Record<string, unknown>;
  result?: CallToolResult;
  error?: { code: number; message: string };
  timer?: NodeJS.Timeout;
}

const tasks = new Map<string, TaskState>();
let made = 0;
let cancelled = 0;

const tools: Tool[] = [
  {
    name: "greet",
    description: "Answers Hello, {name}! at once (never a task).",
    inputSchema: { type: "object", properties: { name: { type: "string" } } },
  },
  {
    name: "slow_compute",
    description: "Sleeps seconds, then answers with the label (a task when the request declares the extension).",
    inputSchema: { type: "object", properties: { seconds: { type: "number" }, label: { type: "string" } } },
  },
  {
    name: "failing_job",
    description: "A task that ends after about a second with a tool execution error.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "protocol_error_job",
    description: "A task that fails with a JSON-RPC error.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "confirm_delete",
    description: "A task that asks to confirm deleting filename, then answers with the answer.",
    inputSchema: { type: "object", properties: { filename: { type: "string" } } },
  },
  {
    name: "multi_input",
    description: "A task that asks two questions at once, then answers with both answers.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "cancellations",
    description: "Answers how many working tasks tasks/cancel has stopped (never a task).",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "test_tool_with_task",
    description: "Asks for user_name (input_required), then becomes a task whose result names it.",
    inputSchema: { type: "object", properties: {} },
  },
];

const confirmSchema = { type: "object" as const, properties: { confirm: { type: "boolean" as const }, name: { type: "string" as const } } };
const elicit = (message: string) => ({ method: "elicitation/create", params: { mode: "form", message, requestedSchema: confirmSchema } });

const text = (value: string, isError = false): CallToolResult => ({ content: [{ type: "text", text: value }], ...(isError ? { isError } : {}) });
const now = () => new Date().toISOString();

function declared(ctx: ServerContext): boolean {
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.["io.modelcontextprotocol/clientCapabilities"] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return Boolean(capabilities?.extensions?.[TASKS]);
}

function requireExtension(ctx: ServerContext): void {
  if (!declared(ctx))
    throw new ProtocolError(MISSING_CAPABILITY, "Missing required client capability", { requiredCapabilities: { extensions: { [TASKS]: {} } } });
}

const settle = (task: TaskState, change: Partial<TaskState>) => Object.assign(task, change, { lastUpdatedAt: now() });

/** The task as `tasks/get` shows it (with its result or error). */
function shown(task: TaskState): Record<string, unknown> {
  const { timer: _, answered: __, answers: ___, ...wire } = task;
  return { ...wire, ttlMs: 300_000, pollIntervalMs: 100 };
}

/** The task as a CreateTaskResult: a plain Task. */
function created(task: TaskState): CallToolResult {
  const { taskId, status, createdAt, lastUpdatedAt } = task;
  return { resultType: "task", taskId, status, createdAt, lastUpdatedAt, ttlMs: 300_000, pollIntervalMs: 100 } as unknown as CallToolResult;
}

/** A working task that `finish` settles after `ms`. */
function startTask(ms: number, finish: Partial<TaskState>): CallToolResult {
  const task: TaskState = { taskId: `task-${process.pid}-${++made}`, status: "working", createdAt: now(), lastUpdatedAt: now() };
  tasks.set(task.taskId, task);
  task.timer = setTimeout(() => settle(task, finish), ms);
  return created(task);
}

/** A task that waits on `questions` (answered through tasks/update), then completes with `answered(answers)`. */
function askingTask(questions: Record<string, unknown>, answered: TaskState["answered"]): CallToolResult {
  const task: TaskState = { taskId: `task-${process.pid}-${++made}`, status: "input_required", createdAt: now(), lastUpdatedAt: now() };
  Object.assign(task, { inputRequests: questions, answered, answers: {} });
  tasks.set(task.taskId, task);
  return created(task);
}

/** Takes the answers to open questions (unknown keys ignored); completes the task once none is open. */
function answer(task: TaskState, responses: Record<string, unknown> | undefined): void {
  if (task.status !== "input_required" || !task.inputRequests || !responses) return;
  const open = { ...task.inputRequests };
  for (const [key, value] of Object.entries(responses)) {
    if (!(key in open)) continue;
    task.answers = { ...task.answers, [key]: value };
    delete open[key];
  }
  if (Object.keys(open).length > 0) settle(task, { inputRequests: open });
  else settle(task, { status: "completed", inputRequests: undefined, result: task.answered?.(task.answers ?? {}) });
}

const seconds = (value: unknown) => Math.min(Math.max(Number(value) || 0, 0), MAX_SECONDS);

function makeServer(): Server {
  const server = new Server({ name: "conformance-tasks", version: "1.0.0" }, { capabilities: { tools: {}, extensions: { [TASKS]: {} } } });
  server.setRequestHandler("tools/list", async () => ({ tools }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    switch (request.params.name) {
      case "greet":
        return text(`Hello, ${String(args.name)}!`);
      case "cancellations":
        return text(String(cancelled));
      case "slow_compute": {
        const ms = seconds(args.seconds) * 1000;
        const result = text(`computed ${String(args.label ?? "")}`);
        if (declared(ctx)) return startTask(ms, { status: "completed", result });
        await new Promise((resolve) => setTimeout(resolve, ms));
        return result;
      }
      case "failing_job":
        requireExtension(ctx);
        return startTask(1000, { status: "completed", result: text("failing_job always reports a tool execution error", true) });
      case "protocol_error_job":
        requireExtension(ctx);
        return startTask(0, { status: "failed", error: { code: -32603, message: "protocol_error_job failed" } });
      case "confirm_delete":
        requireExtension(ctx);
        return askingTask({ confirm: elicit(`Delete ${String(args.filename)}?`) }, (answers) => text(`confirm_delete: ${JSON.stringify(answers)}`));
      case "multi_input":
        requireExtension(ctx);
        return askingTask({ first: elicit("First question?"), second: elicit("Second question?") }, (answers) =>
          text(`multi_input: ${JSON.stringify(answers)}`),
        );
      case "test_tool_with_task": {
        requireExtension(ctx);
        const given = ctx.mcpReq.inputResponses?.user_name as { content?: { name?: unknown; user_name?: unknown } } | undefined;
        if (given === undefined) {
          const question = inputRequired.elicit({ message: "Your name?", requestedSchema: { type: "object", properties: { user_name: { type: "string" } } } });
          return inputRequired({ inputRequests: { user_name: question } }) as unknown as CallToolResult;
        }
        const name = String(given.content?.user_name ?? given.content?.name ?? "");
        return startTask(0, { status: "completed", result: text(`Hello from the task, ${name}!`) });
      }
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
  server.setRequestHandler("tasks/get", { params: TaskId }, async ({ taskId }, ctx) => {
    requireExtension(ctx);
    return shown(find(taskId)) as never;
  });
  server.setRequestHandler("tasks/update", { params: TaskId }, async ({ taskId }, ctx) => {
    requireExtension(ctx);
    answer(find(taskId), ctx.mcpReq.inputResponses as Record<string, unknown> | undefined);
    return {};
  });
  server.setRequestHandler("tasks/cancel", { params: TaskId }, async ({ taskId }, ctx) => {
    requireExtension(ctx);
    const task = find(taskId);
    if (task.status === "working" || task.status === "input_required") {
      clearTimeout(task.timer);
      cancelled++;
      settle(task, { status: "cancelled" });
    }
    return {};
  });
  return server;
}

/** Serves 2026-07-28 Streamable HTTP on `port` of 127.0.0.1. */
function serveHttp(port: number): void {
  const handler = createMcpHandler(makeServer, { legacy: "reject" });
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
    const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: req.method, headers, ...(body.length ? { body } : {}) });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) Readable.fromWeb(response.body as never).pipe(res);
    else res.end();
  });
  http.listen(port, "127.0.0.1", () => {
    const address = http.address();
    process.stdout.write(`listening ${typeof address === "object" && address ? address.port : port}\n`);
  });
}

const httpAt = process.argv.indexOf("--http");
if (httpAt !== -1) serveHttp(Number(process.argv[httpAt + 1] ?? 0));
else {
  serveStdio(() => makeServer(), { legacy: "reject" });
  process.stdin.once("end", () => process.exit(0));
}
