import { haveProgram, misbehavingServerPath, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobId, tempDir, textOf } from "./harness";

const script = join(import.meta.dirname, "fixtures/serve-shared-jobs.mjs");
const haveRedis = haveProgram("redis-server", "redis-server");
const LOCK_MS = "1000";

interface Instance {
  client: Client;
  transport: StdioClientTransport;
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
}

const statusOf = (result: CallToolResult) => (result.structuredContent as { jobs: Array<{ status: string }> }).jobs[0]?.status;

/** How many processes journaled job `id` as started, in every given data folder. */
async function startsOf(dirs: string[], id: string): Promise<number> {
  let starts = 0;
  for (const dir of dirs) {
    const folder = join(dir, "jobs", "segments");
    for (const name of await readdir(folder).catch(() => [] as string[]))
      for (const line of (await readFile(join(folder, name), "utf8")).split("\n"))
        if (line.includes('"t":"started"') && line.includes(`"id":"${id}"`)) starts++;
  }
  return starts;
}

describe.skipIf(!haveRedis)("a codemux process killed after it took a job from the shared queue and before it started it", () => {
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

  async function start(id: string, mode?: "stop-after-take"): Promise<Instance & { dataDir: string; taken: Promise<string> }> {
    const dataDir = await tempDir();
    dirs.push(dataDir);
    const args = [script, dataDir, misbehavingServerPath, redis.url, "take-window:", id, "1", LOCK_MS, ...(mode ? [mode] : [])];
    const transport = new StdioClientTransport({ command: process.execPath, args, stderr: "pipe" });
    let heard = "";
    const taken = new Promise<string>((resolve) =>
      transport.stderr?.on("data", (chunk: Buffer) => {
        heard += chunk.toString();
        const match = /taken (job_[0-9a-f]{12})/.exec(heard);
        if (match) resolve(match[1] as string);
      }),
    );
    const client = new Client({ name: "take-window-test", version: "1.0.0" });
    await client.connect(transport);
    const instance = {
      client,
      transport,
      dataDir,
      taken,
      call: async (name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult,
    };
    instances.push(instance);
    return instance;
  }

  it("leaves the job to another instance, which runs it once", async () => {
    const a = await start("a");
    const b = await start("b", "stop-after-take");
    const holding = jobId(textOf(await a.call("call_tool", { name: "bad__hang", args: {}, background: true })));
    // a is full: this one goes to the shared queue, and b (the only one with room) takes it.
    const handed = jobId(textOf(await a.call("call_tool", { name: "bad__echo", args: { text: "ran once" }, background: true })));
    expect(await b.taken).toBe(handed);
    process.kill(b.transport.pid ?? 0, "SIGKILL");
    await b.client.close().catch(() => undefined);

    // c starts after b died: once b's lock lapses the queue hands the job out again, and c runs it.
    const c = await start("c");
    await until(async () => statusOf(await a.call("jobs", { action: "output", ids: [handed], wait_up_to: 0 })) === "completed");
    expect(textOf(await c.call("jobs", { action: "output", ids: [handed], wait_up_to: 0 }))).toContain("ran once");
    expect(await startsOf([a.dataDir, b.dataDir, c.dataDir], handed)).toBe(1);
    await a.call("jobs", { action: "cancel", ids: [holding] });
  }, 60_000);
});
