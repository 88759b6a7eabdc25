import { haveProgram, misbehavingServerPath, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadJournal } from "@codemux/jobs";
import { jobId, tempDir, textOf } from "./harness";

const script = join(import.meta.dirname, "fixtures/serve-shared-jobs.mjs");
const haveRedis = haveProgram("redis-server", "redis-server");

interface Instance {
  client: Client;
  transport: StdioClientTransport;
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
}

const statusOf = (result: CallToolResult) => (result.structuredContent as { jobs: Array<{ status: string }> }).jobs[0]?.status;

describe.skipIf(!haveRedis)("an instance killed and started again with the same id, while another runs a job it handed to the shared queue", () => {
  let redis: RedisServer;
  const dirs: string[] = [];
  const instances: Instance[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const i of instances) await i.client.close().catch(() => undefined);
    await redis?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function start(dataDir: string, id: string): Promise<Instance> {
    const args = [script, dataDir, misbehavingServerPath, redis.url, "restart-shared:", id, "1"];
    const transport = new StdioClientTransport({ command: process.execPath, args, stderr: "ignore" });
    const client = new Client({ name: "restart-shared-test", version: "1.0.0" });
    await client.connect(transport);
    const instance = {
      client,
      transport,
      call: async (name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult,
    };
    instances.push(instance);
    return instance;
  }

  it("leaves that job to the instance running it: never marked interrupted by the restarted one", async () => {
    const aDir = await tempDir();
    const bDir = await tempDir();
    dirs.push(aDir, bDir);
    const a = await start(aDir, "a");
    const b = await start(bDir, "b");
    const bHolding = jobId(textOf(await b.call("call_tool", { name: "bad__hang", args: {}, background: true })));
    await a.call("call_tool", { name: "bad__hang", args: {}, background: true });
    // a is full: this one goes to the shared queue, and b takes it once its slot frees.
    const handed = jobId(textOf(await a.call("call_tool", { name: "bad__slow", args: { ms: 120_000, steps: 1200 }, background: true })));
    await b.call("jobs", { action: "cancel", ids: [bHolding] });
    await until(async () => statusOf(await b.call("jobs", { action: "output", ids: [handed], wait_up_to: 0 })) === "running");

    process.kill(a.transport.pid ?? 0, "SIGKILL");
    await a.client.close().catch(() => undefined);
    const again = await start(aDir, "a");
    // Its recovery has run once it answers; its journal must not say the job b runs was interrupted.
    expect(statusOf(await again.call("jobs", { action: "output", ids: [handed], wait_up_to: 0 }))).toBe("running");
    const journal = await loadJournal(join(aDir, "jobs"));
    expect(journal.jobs.get(handed)?.status).not.toBe("interrupted");
    expect(statusOf(await b.call("jobs", { action: "output", ids: [handed], wait_up_to: 0 }))).toBe("running");
    await b.call("jobs", { action: "cancel", ids: [handed] });
  });
});
