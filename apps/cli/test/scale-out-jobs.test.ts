import { haveProgram, misbehavingEntry, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endParts } from "./scale-out-parts";
import { serveCli } from "./serve-cli";

const ALICE = "alice-scale-out-jobs-token-0123456789";
const BOB = "bob-scale-out-jobs-token-0123456789";
const SLOW = 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 120000, steps: 120 });';

type Job = { status: string; error?: string };

describe.skipIf(!haveProgram("redis-server", "redis-server"))("background jobs across two codemux instances on one Redis, through HTTP", () => {
  let dir: string;
  let redis: RedisServer;
  const started: ChildProcess[] = [];
  const clients: Client[] = [];
  const urls: Record<string, string> = {};

  async function startInstance(id: string): Promise<{ child: ChildProcess; url: string }> {
    const home = await mkdtemp(join(dir, `home-${id}-`));
    const env = { ...process.env, CODEMUX_HOME: home, CODEMUX_STORE: redis.url };
    const args = ["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--instance-id", id, "--spill-bytes", "2000", "--drain-ms", "2000"];
    const served = await serveCli([...args, "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`], { cwd: dir, env, started });
    urls[id] = served.url;
    return served;
  }
  async function mcpClient(url: string, token = ALICE): Promise<Client> {
    const client = new Client({ name: "scale-out-jobs-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }
  const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  const jobIdOf = (result: CallToolResult) => /job_[0-9a-f]{12}/.exec(textOf(result))?.[0] as string;
  const jobs = (result: CallToolResult) => (result.structuredContent as { jobs: Job[] }).jobs;
  const output = async (client: Client, ids: string[], extra: Record<string, unknown> = {}) =>
    call(client, "jobs", { action: "output", ids, wait_up_to: 0, ...extra });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-scale-out-jobs-"));
    redis = await startRedisServer();
    await writeFile(join(dir, "codemux.json"), JSON.stringify({ mcpServers: { m: misbehavingEntry("m") } }));
    await startInstance("a");
    await startInstance("b");
  }, 60_000);

  afterAll(() => endParts({ clients, started, redis, dir }));

  it("shows a job's transcript and its result over 256 KiB, run on one instance, to its owner through the other, and to no one else", async () => {
    const [onA, onB] = [await mcpClient(urls.a as string), await mcpClient(urls.b as string)];
    const code = 'import { echo } from "mcp/servers/m/echo";\nawait echo({ text: "one" });\nawait echo({ text: "two" });\nexport default 1;';
    const snippet = jobIdOf(await call(onA, "execute_code", { code, background: true }));
    expect(jobs(await output(onB, [snippet], { wait_up_to: 20 }))[0]?.status).toBe("completed");
    expect(textOf(await output(onB, [snippet], { transcript: true }))).toMatch(
      /Transcript of job_[0-9a-f]{12} \(2 calls\):\n.*#0 m__echo .* ok .*\n.*#1 m__echo .* ok/,
    );

    const big = jobIdOf(
      await call(onA, "call_tool", { name: "m__huge", args: { bytes: 400_000, lines: true }, resultSizeThreshold: 1_000_000, background: true }),
    );
    const done = await output(onB, [big], { wait_up_to: 20 });
    expect(jobs(done)[0]?.status).toBe("completed");
    // The 400 KB result, too large for the shared record, comes whole from Redis.
    const text = textOf(done);
    expect(text.length).toBeGreaterThan(400_000);
    expect(text).toMatch(/\nline 5000: x{60}\n/);

    const bob = await mcpClient(urls.b as string, BOB);
    const bobs = await output(bob, [snippet, big], { transcript: true });
    expect(jobs(bobs).map((j) => j.status)).toEqual(["not_found", "not_found"]);
    expect(textOf(bobs)).not.toContain("m__echo");
    expect(textOf(bobs)).not.toContain("line 1:");
  }, 60_000);

  it("hands a job queued on an instance back to the shared queue when that instance is SIGTERMed, and the other runs it", async () => {
    const c = await startInstance("c");
    const [onC, onB] = [await mcpClient(c.url), await mcpClient(urls.b as string)];
    // c's four slots (the default) are taken.
    for (let i = 0; i < 4; i++) jobIdOf(await call(onC, "execute_code", { code: SLOW, background: true }));
    // Queued while Redis is down, the job waits in c's own queue.
    await redis.kill();
    const queued = await call(onC, "call_tool", { name: "m__echo", args: { text: "handed back" }, background: true });
    expect(textOf(queued)).toContain("It is queued at position 1.");
    const id = jobIdOf(queued);
    await redis.restart();
    await until(async () => !(await call(onB, "jobs", { action: "list" })).isError);
    c.child.kill("SIGTERM");
    await new Promise((resolve) => c.child.once("exit", resolve));
    const done = await output(onB, [id], { wait_up_to: 30 });
    expect(jobs(done)[0]?.status).toBe("completed");
    expect(textOf(done)).toContain("handed back");
  }, 90_000);
});
