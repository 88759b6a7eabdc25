import { Client, fromJsonSchema, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { ToolCallMiddleware } from "@codemux/core";
import { pluginMiddleware } from "@codemux/hooks";
import { createJobs, type Jobs } from "@codemux/jobs";
import { Codemux } from "@codemux/server";
import { conformanceTasksServerPath, recordTasks } from "@codemux/test-servers";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { TOKENS, bearer, config, textOf } from "./helpers";

const TASKS = "io.modelcontextprotocol/tasks";
/** Any object: the extension's results are not in the SDK's schemas. */
const Loose = fromJsonSchema({ type: "object" });

interface TaskClient {
  client: Client;
  get(taskId: string): Promise<Record<string, unknown>>;
  update(taskId: string, inputResponses: Record<string, unknown>): Promise<Record<string, unknown>>;
  cancel(taskId: string): Promise<Record<string, unknown>>;
  /** Calls a tool expecting a task: the created task as it came on the wire. */
  startTask(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** The SDK v2 client (2026-07-28) as `token`'s principal, declaring `capabilities` (the Tasks extension and elicitation by default). */
async function taskClient(
  url: string,
  token: string,
  capabilities: Record<string, unknown> = { extensions: { [TASKS]: {} }, elicitation: {} },
): Promise<TaskClient> {
  const client = new Client({ name: "tasks", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(token) } });
  await client.connect(transport);
  const created = recordTasks(transport);
  const ask = (method: string, params: Record<string, unknown>) => client.request({ method, params } as never, Loose) as Promise<Record<string, unknown>>;
  return {
    client,
    get: (taskId) => ask("tasks/get", { taskId }),
    update: (taskId, inputResponses) => ask("tasks/update", { taskId, inputResponses }),
    cancel: (taskId) => ask("tasks/cancel", { taskId }),
    startTask: async (name, args) => {
      const before = created.length;
      // The SDK v2 client refuses to decode a task (it has no Tasks support): the answer is read off its transport.
      await expect(client.callTool({ name, arguments: args })).rejects.toThrow(/Unsupported result type 'task'/);
      expect(created.length).toBe(before + 1);
      return created[before] as Record<string, unknown>;
    },
  };
}

/** Polls tasks/get until the task's status is one of `statuses`. */
async function until(tasks: TaskClient, taskId: string, statuses: string[]): Promise<Record<string, unknown>> {
  for (let i = 0; i < 600; i++) {
    const task = await tasks.get(taskId);
    if (statuses.includes(task.status as string)) return task;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${taskId} never reached ${statuses.join(" or ")}`);
}

const errorOf = (attempt: Promise<unknown>) =>
  attempt.then(
    () => undefined,
    (e: unknown) => e as { code?: number; message?: string; data?: unknown },
  );

/** A passthrough codemux with jobs over the conformance tasks server, served over HTTP to alice and bob; `close` ends it all. */
async function tasksGateway(
  prefix: string,
  { jobLimits = {}, middleware = [] }: { jobLimits?: { maxConcurrent?: number }; middleware?: ToolCallMiddleware[] } = {},
) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const jobs = createJobs({ dataDir: dir, ...jobLimits });
  const core = new Codemux({
    config: config({ t: { command: process.execPath, args: [conformanceTasksServerPath] } }),
    mode: "passthrough",
    dataDir: dir,
    jobs: jobs.runner,
    metaTools: jobs.metaTools,
    middleware: [jobs.middleware, ...middleware],
    taskStore: ({ session, notify, surface }) => jobs.taskStore({ surface, session, onStatus: notify }),
  });
  core.start();
  await core.ready();
  const http = new CodemuxHttpServer(core, {
    port: 0,
    tokens: [
      { name: "alice", token: TOKENS.alice },
      { name: "bob", token: TOKENS.bob },
    ],
    log: () => undefined,
  });
  await http.listen();
  return {
    jobs,
    http,
    close: async () => {
      await http.close();
      await jobs.close();
      await core.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe("a 2026 server's task, passed up to a 2026 client that declared the Tasks extension (passthrough)", () => {
  let gateway: Awaited<ReturnType<typeof tasksGateway>>;
  let http: CodemuxHttpServer;
  let jobs: Jobs;
  beforeAll(async () => {
    gateway = await tasksGateway("codemux-tasks-up-");
    ({ http, jobs } = gateway);
  });
  afterAll(() => gateway?.close());

  it("the call answers with codemux's own task (working, durable at once), which completes with the server's result", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const created = await tasks.startTask("t__slow_compute", { seconds: 0.3, label: "up" });
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: expect.any(Number), pollIntervalMs: expect.any(Number) });
    const taskId = created.taskId as string;
    // codemux's id, never the server's (a downstream id is that server's bearer handle on a shared connection).
    expect(taskId).toMatch(/^job_/);
    expect((await tasks.get(taskId)).taskId).toBe(taskId);
    const done = await until(tasks, taskId, ["completed", "failed", "cancelled"]);
    expect(done.status).toBe("completed");
    expect(textOf(done.result)).toBe("computed up");
    expect(jobs.manager.get(taskId, "token:alice")?.kind).toBe("task");
    await tasks.client.close();
  });

  it("a tool error is a completed task with the error result; a task failed with a JSON-RPC error is failed with it", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const toolError = (await tasks.startTask("t__failing_job", {})).taskId as string;
    const failing = (await tasks.startTask("t__protocol_error_job", {})).taskId as string;
    const completed = await until(tasks, toolError, ["completed", "failed", "cancelled"]);
    expect(completed.status).toBe("completed");
    expect(completed.result).toMatchObject({ isError: true });
    expect(textOf(completed.result)).toContain("failing_job always reports a tool execution error");
    const failed = await until(tasks, failing, ["completed", "failed", "cancelled"]);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({ code: -32603, message: expect.stringContaining("protocol_error_job failed") });
    await tasks.client.close();
  });

  it("the server's questions become the task's inputRequests, answered with tasks/update, one at a time", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const taskId = (await tasks.startTask("t__multi_input", {})).taskId as string;
    let asking = await until(tasks, taskId, ["input_required", "completed", "failed"]);
    for (let i = 0; i < 100 && Object.keys(asking.inputRequests ?? {}).length < 2; i++) asking = await tasks.get(taskId);
    expect(asking.status).toBe("input_required");
    const keys = Object.keys(asking.inputRequests as object);
    expect(keys).toHaveLength(2);
    expect(Object.values(asking.inputRequests as object).map((q: { method: string }) => q.method)).toEqual(["elicitation/create", "elicitation/create"]);
    expect(await tasks.update(taskId, { [keys[0] as string]: { action: "accept", content: { name: "one" } } })).toMatchObject({});
    const partly = await tasks.get(taskId);
    expect(partly.status).toBe("input_required");
    expect(Object.keys(partly.inputRequests as object)).toEqual([keys[1]]);
    await tasks.update(taskId, { [keys[1] as string]: { action: "accept", content: { name: "two" } } });
    const done = await until(tasks, taskId, ["completed", "failed", "cancelled"]);
    expect(done.status).toBe("completed");
    expect(textOf(done.result)).toContain('"name":"one"');
    expect(textOf(done.result)).toContain('"name":"two"');
    await tasks.client.close();
  });

  it("tasks/cancel cancels codemux's task, and tasks/cancel reaches the server's task", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const count = async () => Number(textOf(await tasks.client.callTool({ name: "t__cancellations", arguments: {} })));
    const before = await count();
    const taskId = (await tasks.startTask("t__slow_compute", { seconds: 60, label: "cancel me" })).taskId as string;
    expect(await tasks.cancel(taskId)).toMatchObject({});
    expect((await until(tasks, taskId, ["cancelled", "completed", "failed"])).status).toBe("cancelled");
    await expect.poll(count, { timeout: 10_000 }).toBe(before + 1);
    // A terminal task's cancel is acknowledged the same way.
    expect(await tasks.cancel(taskId)).toMatchObject({});
    await tasks.client.close();
  });

  it("another principal cannot get, update or cancel the task: it is answered as unknown, and the task is untouched", async () => {
    const alice = await taskClient(http.url, TOKENS.alice);
    const bob = await taskClient(http.url, TOKENS.bob);
    const taskId = (await alice.startTask("t__confirm_delete", { filename: "alice-secret.txt" })).taskId as string;
    expect((await until(alice, taskId, ["input_required", "completed", "failed"])).status).toBe("input_required");
    for (const attempt of [
      () => bob.get(taskId),
      () => bob.update(taskId, { q1: { action: "accept", content: { confirm: true } } }),
      () => bob.cancel(taskId),
    ]) {
      const error = await errorOf(attempt());
      expect(error?.code).toBe(-32602);
      expect(error?.message).not.toContain("alice-secret");
    }
    const still = await alice.get(taskId);
    expect(still.status).toBe("input_required");
    expect(JSON.stringify(still.inputRequests)).toContain("alice-secret.txt");
    await alice.cancel(taskId);
    await Promise.all([alice.client.close(), bob.client.close()]);
  });

  it("a 2026 client that did not declare the extension: answered in the call, and a tool whose server requires it gets -32021", async () => {
    const plain = await taskClient(http.url, TOKENS.alice, { elicitation: {} });
    const answer = await plain.client.callTool({ name: "t__slow_compute", arguments: { seconds: 0.1, label: "sync" } });
    expect(textOf(answer)).toBe("computed sync");
    const error = await errorOf(plain.client.callTool({ name: "t__failing_job", arguments: {} }));
    expect(error?.code).toBe(-32021);
    expect(JSON.stringify(error?.data)).toContain(TASKS);
    await plain.client.close();
  });
});

describe("a server's task passed up, with job limits and plugins", () => {
  /** The labels of the calls the plugin admitted, and the texts of the results it saw. */
  const admitted: string[] = [];
  const answered: string[] = [];
  const plugins = pluginMiddleware([
    {
      name: "counter",
      beforeCall: (call) => void (call.name === "t__slow_compute" && admitted.push(String(call.arguments.label))),
      afterCall: (call, result) => void (call.name === "t__slow_compute" && answered.push(textOf(result))),
    },
  ]);
  let gateway: Awaited<ReturnType<typeof tasksGateway>>;
  let http: CodemuxHttpServer;
  let jobs: Jobs;
  beforeAll(async () => {
    // One job at a time: a second task waits in the queue while the first runs.
    gateway = await tasksGateway("codemux-tasks-queued-", { jobLimits: { maxConcurrent: 1 }, middleware: [plugins] });
    ({ http, jobs } = gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await plugins.close();
  });

  it("a plugin admits the call once (a limit counts it once) and sees the task's result after it", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const taskId = (await tasks.startTask("t__slow_compute", { seconds: 0.2, label: "once" })).taskId as string;
    expect((await until(tasks, taskId, ["completed", "failed", "cancelled"])).status).toBe("completed");
    await expect.poll(() => answered).toContain("computed once");
    expect(admitted.filter((label) => label === "once")).toEqual(["once"]);
    await tasks.client.close();
  });

  it("cancelled before it ran, it still cancels the server's task (which runs from the call on)", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const count = async () => Number(textOf(await tasks.client.callTool({ name: "t__cancellations", arguments: {} })));
    const running = (await tasks.startTask("t__slow_compute", { seconds: 60, label: "runs" })).taskId as string;
    const queued = (await tasks.startTask("t__slow_compute", { seconds: 60, label: "waits" })).taskId as string;
    expect(jobs.manager.get(queued, "token:alice")?.status).toBe("queued");
    const before = await count();
    await tasks.cancel(queued);
    expect((await until(tasks, queued, ["cancelled", "completed", "failed"])).status).toBe("cancelled");
    await expect.poll(count, { timeout: 10_000 }).toBe(before + 1);
    expect(jobs.manager.get(running, "token:alice")?.status).toBe("running");
    await tasks.cancel(running);
    await tasks.client.close();
  });
});
