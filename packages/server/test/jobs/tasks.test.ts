import { Codemux, createSessionServer } from "@codemux/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createJobs, type Jobs } from "@codemux/jobs";
import { config, misbehaving, tempDir, textOf } from "./harness";

let cleanup: (() => Promise<void>) | undefined;
const statuses: string[] = [];
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** codemux's own session server with the job store as its task store, as the CLI wires it. */
async function connectWithTasks(): Promise<{ client: Client; jobs: Jobs }> {
  const dataDir = await tempDir();
  const jobs = createJobs({ dataDir });
  let core: Codemux | undefined;
  core = new Codemux({
    config: config({ bad: misbehaving() }),
    jobs: jobs.runner,
    metaTools: jobs.metaTools,
    middleware: [jobs.middleware],
    dataDir,
    taskStore: ({ session, notify, surface }) => jobs.taskStore({ surface, session, onStatus: notify }),
  });
  core.start();
  const server = createSessionServer(core.sessions);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "tasks-test", version: "1.0.0" });
  client.setNotificationHandler(
    TaskStatusNotificationSchema,
    (notification) => void statuses.push(`${notification.params.taskId} ${notification.params.status}`),
  );
  await client.connect(clientSide);
  cleanup = async () => {
    await client.close();
    await jobs.close();
    await core?.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  return { client, jobs };
}

describe("MCP tasks served from the job store", () => {
  it("a task-augmented tools/call runs as a job: create, poll, result, list", async () => {
    const { client } = await connectWithTasks();
    const created = await client.request(
      { method: "tools/call", params: { name: "call_tool", arguments: { name: "bad__slow", args: { ms: 300 } }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe("working");
    expect(created.task.taskId).toMatch(/^job_/);
    const polled = await client.experimental.tasks.getTask(created.task.taskId);
    expect(["working", "completed"]).toContain(polled.status);
    const result = (await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(textOf(result)).toContain("slept 300 ms");
    expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe("completed");
    for (let i = 0; i < 100 && !statuses.includes(`${created.task.taskId} completed`); i++) await new Promise((r) => setTimeout(r, 20));
    expect(statuses).toContain(`${created.task.taskId} completed`);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toContain(created.task.taskId);
    // The same job, seen through the meta-tool.
    const output = (await client.callTool({ name: "jobs", arguments: { action: "output", ids: [created.task.taskId], block: false } })) as CallToolResult;
    expect(textOf(output)).toContain("completed");
  });

  it("tasks/cancel cancels the job, and the cancellation reaches the downstream server", async () => {
    const { client, jobs } = await connectWithTasks();
    const created = await client.request(
      { method: "tools/call", params: { name: "call_tool", arguments: { name: "bad__slow", args: { ms: 120_000, steps: 1200 } }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const id = created.task.taskId;
    // Until the downstream server reports progress: it has the request.
    for (let i = 0; i < 400 && !jobs.manager.get(id, "local")?.progress?.updates; i++) await new Promise((r) => setTimeout(r, 50));
    const cancelled = await client.experimental.tasks.cancelTask(id);
    expect(cancelled.status).toBe("cancelled");
    expect((await client.experimental.tasks.getTask(id)).status).toBe("cancelled");
    let count = 0;
    for (let i = 0; i < 100 && count === 0; i++) {
      const report = (await client.callTool({ name: "call_tool", arguments: { name: "bad__cancellations" } })) as CallToolResult;
      count = (JSON.parse(textOf(report)) as { count: number }).count;
      if (count === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(count).toBe(1);
  });
});
