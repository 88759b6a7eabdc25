import { Client, fromJsonSchema, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createJobs, type Jobs } from "@codemux/jobs";
import { Codemux } from "@codemux/server";
import { askingServerPath, recordTasks } from "@codemux/test-servers";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { TOKENS, bearer, config, misbehaving, textOf } from "./helpers";

const TASKS = "io.modelcontextprotocol/tasks";
const MODERN = "2026-07-28";
/** The 2026-07-28 envelope of a raw request that declares the extension. */
const envelope = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
};
/** Any object: the extension's results are not in the SDK's schemas. */
const Loose = fromJsonSchema({ type: "object" });

interface TaskClient {
  client: Client;
  /** Raw `tools/call` answers with `resultType: "task"`, which the SDK v2 client refuses to decode (it has no Tasks support). */
  created: Array<Record<string, unknown>>;
  get(taskId: string): Promise<Record<string, unknown>>;
  update(taskId: string, inputResponses: Record<string, unknown>): Promise<Record<string, unknown>>;
  cancel(taskId: string): Promise<Record<string, unknown>>;
  /** Calls a tool expecting a task: the created task as it came on the wire. */
  startTask(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** The SDK v2 client (2026-07-28) as `token`'s principal, declaring the Tasks extension (and elicitation) on every request. */
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
    created,
    get: (taskId) => ask("tasks/get", { taskId }),
    update: (taskId, inputResponses) => ask("tasks/update", { taskId, inputResponses }),
    cancel: (taskId) => ask("tasks/cancel", { taskId }),
    startTask: async (name, args) => {
      const before = created.length;
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

describe("the Tasks extension (2026-07-28) on codemux's jobs", () => {
  let dir: string;
  let jobs: Jobs;
  let core: Codemux;
  let http: CodemuxHttpServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-tasks-ext-"));
    jobs = createJobs({ dataDir: dir });
    core = new Codemux({
      config: config({ m: misbehaving(), ask: { command: process.execPath, args: [askingServerPath] } }),
      dataDir: dir,
      jobs: jobs.runner,
      metaTools: jobs.metaTools,
      middleware: [jobs.middleware],
      taskStore: ({ session, notify, surface }) => jobs.taskStore({ surface, session, onStatus: notify }),
    });
    core.start();
    await core.ready();
    http = new CodemuxHttpServer(core, {
      port: 0,
      tokens: [
        { name: "alice", token: TOKENS.alice },
        { name: "bob", token: TOKENS.bob },
      ],
      log: () => undefined,
    });
    await http.listen();
  });
  afterAll(async () => {
    await http?.close();
    await jobs?.close();
    await core?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("server/discover declares the extension, and not the 2025-11-25 tasks capability", async () => {
    const { client } = await taskClient(http.url, TOKENS.alice);
    const discover = client.getDiscoverResult();
    // Beside the Tasks extension, only MCP Apps' (codemux carries apps to hosts that render them) and Skills' (its servers' skills).
    expect(discover?.capabilities.extensions).toEqual({ [TASKS]: {}, "io.modelcontextprotocol/ui": expect.any(Object), "io.modelcontextprotocol/skills": {} });
    expect(discover?.capabilities).not.toHaveProperty("tasks");
    await client.close();
  });

  it("execute_code with background: true becomes a task: working, then completed with what the call would have answered", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const code = 'import { slow } from "mcp/servers/m/slow";\nawait slow({ ms: 200 });\nexport default "done in a task";';
    const created = await tasks.startTask("execute_code", { code, background: true });
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: expect.any(Number), pollIntervalMs: expect.any(Number) });
    const taskId = created.taskId as string;
    expect(taskId).toMatch(/^job_/);
    const done = await until(tasks, taskId, ["completed", "failed", "cancelled"]);
    expect(done.status).toBe("completed");
    expect(textOf(done.result)).toContain("done in a task");
    // The same job, seen through the jobs meta-tool.
    expect(textOf(await tasks.client.callTool({ name: "jobs", arguments: { action: "list" } }))).toContain(taskId);
    await tasks.client.close();
  });

  it("a task's downstream question waits as input_required, is answered with tasks/update, and the task completes with the answer", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const created = await tasks.startTask("call_tool", { name: "ask__ask", args: { message: "Deploy to production?" }, background: true });
    const taskId = created.taskId as string;
    const asking = await until(tasks, taskId, ["input_required", "completed", "failed"]);

    expect(asking.status).toBe("input_required");
    expect(asking.inputRequests).toEqual({ q1: { method: "elicitation/create", params: expect.objectContaining({ message: "Deploy to production?" }) } });
    // An unknown key and an answer of the wrong shape are ignored: the question stays open.
    expect(await tasks.update(taskId, { nope: { action: "accept" }, q1: { wrong: true } })).toMatchObject({});
    expect((await tasks.get(taskId)).status).toBe("input_required");
    await tasks.update(taskId, { q1: { action: "accept", content: { ok: true } } });
    const done = await until(tasks, taskId, ["completed", "failed", "cancelled"]);
    expect(done.status).toBe("completed");
    expect(JSON.parse(textOf(done.result))).toEqual({ action: "accept", content: { ok: true } });
    // The key is spent: answering it again changes nothing.
    await tasks.update(taskId, { q1: { action: "decline" } });
    expect((await tasks.get(taskId)).status).toBe("completed");
    await tasks.client.close();
  });

  it("tasks/cancel cancels the job, and the cancellation reaches the downstream server", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    const count = async () => JSON.parse(textOf(await tasks.client.callTool({ name: "call_tool", arguments: { name: "m__cancellations" } }))).count as number;
    const before = await count();
    const created = await tasks.startTask("call_tool", { name: "m__slow", args: { ms: 120_000, steps: 1200 }, background: true });
    const taskId = created.taskId as string;
    for (let i = 0; i < 400 && !jobs.manager.get(taskId, "token:alice")?.progress?.updates; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await tasks.cancel(taskId)).toMatchObject({});
    expect((await tasks.get(taskId)).status).toBe("cancelled");
    let after = before;
    for (let i = 0; i < 100 && after === before; i++) {
      after = await count();
      if (after === before) await new Promise((r) => setTimeout(r, 50));
    }
    expect(after).toBe(before + 1);
    await tasks.client.close();
  });

  it("another principal cannot get, update or cancel a task: it is answered as unknown, and the task is untouched", async () => {
    const alice = await taskClient(http.url, TOKENS.alice);
    const bob = await taskClient(http.url, TOKENS.bob);
    const created = await alice.startTask("call_tool", { name: "ask__ask", args: { message: "alice's secret question" }, background: true });
    const taskId = created.taskId as string;
    expect((await until(alice, taskId, ["input_required", "completed", "failed"])).status).toBe("input_required");
    for (const attempt of [() => bob.get(taskId), () => bob.update(taskId, { q1: { action: "decline" } }), () => bob.cancel(taskId)]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e as { code?: number; message?: string },
      );
      expect(error?.code).toBe(-32602);
      expect(error?.message).toContain(`No task "${taskId}" for this client`);
      expect(error?.message).not.toContain("secret");
    }
    const still = await alice.get(taskId);
    expect(still.status).toBe("input_required");
    expect(still.inputRequests).toHaveProperty("q1");
    await alice.cancel(taskId);
    await Promise.all([alice.client.close(), bob.client.close()]);
  });

  it("a request that does not declare the extension gets no task: background: true answers with a job id as before", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice, { elicitation: {} });
    const answer = await tasks.client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "x" }, background: true } });
    expect(textOf(answer)).toMatch(/^Started job job_[0-9a-f]+ in the background/);
    expect(tasks.created).toEqual([]);
    await tasks.client.close();
  });

  it("tasks/get, tasks/update and tasks/cancel from a request that does not declare the extension: -32021 naming it (SEP-2663)", async () => {
    const alice = await taskClient(http.url, TOKENS.alice);
    const plain = await taskClient(http.url, TOKENS.alice, { elicitation: {} });
    const taskId = (await alice.startTask("execute_code", { code: "return 1", background: true })).taskId as string;
    for (const attempt of [() => plain.get(taskId), () => plain.update(taskId, {}), () => plain.cancel(taskId)]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e as { code?: number; message?: string; data?: unknown },
      );
      expect(error?.code).toBe(-32021);
      expect(error?.message).toContain("io.modelcontextprotocol/tasks");
      expect(error?.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
    }
    expect((await until(alice, taskId, ["completed"])).status).toBe("completed");
    await Promise.all([alice.client.close(), plain.client.close()]);
  });

  it("a call without the background hint is answered in the foreground even when the extension is declared", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice);
    expect(textOf(await tasks.client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "now" } } }))).toBe("now");
    expect(tasks.created).toEqual([]);
    await tasks.client.close();
  });

  it("the agent runs as a task, and each model turn is a sampling question answered with tasks/update", async () => {
    const tasks = await taskClient(http.url, TOKENS.alice, { extensions: { [TASKS]: {} }, sampling: {} });
    const created = await tasks.startTask("agent", { prompt: "Say hello." });
    const taskId = created.taskId as string;
    const asking = await until(tasks, taskId, ["input_required", "completed", "failed"]);
    expect(asking.status).toBe("input_required");
    const [[key, request]] = Object.entries(asking.inputRequests as Record<string, { method: string }>) as [[string, { method: string }]];
    expect(request.method).toBe("sampling/createMessage");
    await tasks.update(taskId, { [key]: { role: "assistant", model: "stand-in", content: { type: "text", text: "Hello from the sub-agent." } } });
    const done = await until(tasks, taskId, ["completed", "failed", "cancelled"]);
    expect(done.status).toBe("completed");
    expect(textOf(done.result)).toContain("Hello from the sub-agent.");
    await tasks.client.close();
  });

  it("a 2026-07-28 request's params.task is ignored (SEP-2663): the call is answered as usual", async () => {
    const body = await rawPost(http.url, "tools/call", { name: "call_tool", arguments: { name: "m__echo", args: { text: "plain" } }, task: { ttl: 60_000 } });
    expect(body.result?.resultType).toBe("complete");
    expect(textOf(body.result)).toBe("plain");
  });

  it("tasks/result and tasks/list are not methods of the extension: -32601", async () => {
    for (const method of ["tasks/result", "tasks/list"]) {
      // Sent raw: the SDK v2 client will not send a 2025-11-25 method on 2026-07-28.
      const body = await rawPost(http.url, method, { taskId: "job_0" });
      expect(body.error?.code, method).toBe(-32601);
    }
  });
});

describe("a task codemux cannot take", () => {
  it("is the call's error result, a sentence that names the limit (the principal's jobs at once)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-tasks-full-"));
    const jobs = createJobs({ dataDir: dir, jobsAtOnce: () => 0 });
    const core = new Codemux({
      config: config({ m: misbehaving() }),
      dataDir: dir,
      jobs: jobs.runner,
      metaTools: jobs.metaTools,
      taskStore: ({ session, notify, surface }) => jobs.taskStore({ surface, session, onStatus: notify }),
    });
    core.start();
    const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "alice", token: TOKENS.alice }], log: () => undefined });
    await http.listen();
    try {
      const tasks = await taskClient(http.url, TOKENS.alice);
      const answer = await tasks.client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "x" }, background: true } });
      expect(answer.isError).toBe(true);
      expect(textOf(answer)).toMatch(/already has 0 background jobs, as many as its policy allows at once \(concurrentJobs: 0\)/);
      expect(tasks.created).toEqual([]);
      await tasks.client.close();
    } finally {
      await http.close();
      await jobs.close();
      await core.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** One 2026-07-28 POST as alice, declaring the extension, answered as JSON. */
async function rawPost(url: string, method: string, params: Record<string, unknown>): Promise<{ result?: Record<string, unknown>; error?: { code: number } }> {
  const name = typeof params.name === "string" ? params.name : String(params.taskId);
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      ...bearer(TOKENS.alice),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      "mcp-name": name,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: envelope } }),
  });
  const text = await response.text();
  // An answer on an SSE stream is its last data line.
  const json = response.headers.get("content-type")?.startsWith("text/event-stream")
    ? (text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .at(-1)
        ?.slice(6) ?? "{}")
    : text;
  return JSON.parse(json) as { result?: Record<string, unknown>; error?: { code: number } };
}
