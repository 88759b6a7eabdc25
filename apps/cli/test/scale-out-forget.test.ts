import { STORE_FORMAT_VERSION } from "@codemux/core";
import { RedisConnection, RedisStore } from "@codemux/redis";
import { freePort, haveProgram, misbehavingEntry, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { endParts } from "./scale-out-parts";
import { serveCli } from "./serve-cli";

const ALICE = "alice-forget-redis-token-0123456789";
const BOB = "bob-forget-redis-token-0123456789";
const HELLO = '/** Says hello. */\nexport async function hello(input: { name: string }): Promise<string> {\n  return "hello " + input.name;\n}\n';
const SLOW = 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 120000, steps: 120 });';

describe.skipIf(!haveProgram("redis-server", "redis-server"))("codemux forget against the Redis store instances share", () => {
  let dir: string;
  let redis: RedisServer;
  let connection: RedisConnection;
  let url: string;
  let urlB: string;
  const started: ChildProcess[] = [];
  const clients: Client[] = [];

  const bearer = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  const call = async (token: string, tool: string, args: Record<string, unknown>) =>
    (await (await fetch(`${url}/v1/tools/${tool}/call`, { method: "POST", headers: bearer(token), body: JSON.stringify(args) })).json()) as {
      spilled?: { handle: string };
    };
  const jobIdOf = (result: unknown) => /job_[0-9a-f]{12}/.exec(JSON.stringify(result))?.[0] as string;
  const statusOf = async (client: Client, id: string, wait = 0) =>
    (
      (await client.callTool({ name: "jobs", arguments: { action: "output", ids: [id], wait_up_to: wait } })) as unknown as {
        structuredContent: { jobs: Array<{ status: string }> };
      }
    ).structuredContent.jobs[0]?.status;
  const hashOf = (principal: string) => createHash("sha256").update(principal).digest("hex").slice(0, 32);
  /** The principal's saved skills, memories, and its job's transcript in Redis: how many of those keys exist. */
  const keptOf = (principal: string, job: string) =>
    connection.client.exists(`codemux:skills:of:${hashOf(principal)}`, `codemux:list:memories:${hashOf(principal)}`, `codemux:job:${job}:transcript`);
  const cachedOf = async (owner: string) =>
    (await new RedisStore(connection, { name: "plugin-cache" }).list({ owner })).filter((entry) => entry.owner === owner).length;

  /** What a principal leaves in Redis: a kept result, a finished job, a cached answer; returns them. */
  async function leave(token: string) {
    const client = new Client({ name: "forget-redis", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    const handle = (await call(token, "m__huge", { bytes: 20_000 })).spilled?.handle as string;
    const job = jobIdOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "job" }, background: true } }));
    expect(await statusOf(client, job, 20)).toBe("completed");
    await call(token, "m__counter", {});
    await client.callTool({ name: "save_skill", arguments: { name: "hello", code: HELLO, description: "Say hello to someone by name." } });
    return { client, handle, job };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-forget-redis-"));
    redis = await startRedisServer();
    connection = await RedisConnection.open({ url: redis.url, prefix: "codemux:" });
    await connection.ready(5000);
    const config = { mcpServers: { m: misbehavingEntry("m") }, plugins: { cache: { tools: ["m__counter"], ttlMs: 600_000 }, memory: {} } };
    await writeFile(join(dir, "codemux.json"), JSON.stringify(config));
    const home = await mkdtemp(join(dir, "home-a-"));
    const env = { ...process.env, CODEMUX_HOME: home, CODEMUX_STORE: redis.url };
    const args = ["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--instance-id", "a", "--spill-bytes", "2000"];
    url = (await serveCli([...args, "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`], { cwd: dir, env, started })).url;
    const homeB = await mkdtemp(join(dir, "home-b-"));
    const argsB = [...args.slice(0, -4), "--instance-id", "b", "--spill-bytes", "2000"];
    urlB = (await serveCli([...argsB, "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`], { cwd: dir, env: { ...env, CODEMUX_HOME: homeB }, started })).url;
  }, 60_000);

  afterAll(() => endParts({ dir, redis, started, clients, closers: [async () => connection?.close()] }));

  it("deletes the principal's kept results, job records and cached answers from another machine, cancels its running job first, says what went, and keeps the other's", async () => {
    const [alice, bob] = [await leave(ALICE), await leave(BOB)];
    const running = jobIdOf(await alice.client.callTool({ name: "execute_code", arguments: { code: SLOW, background: true } }));
    await until(async () => (await statusOf(alice.client, running)) === "running");
    expect(await cachedOf("token:alice")).toBe(1);
    expect(await keptOf("token:alice", alice.job)).toBe(3);

    // Another machine: its own empty CODEMUX_HOME, the deployment's Redis.
    const elsewhere = { ...process.env, CODEMUX_HOME: await mkdtemp(join(dir, "home-cli-")) };
    const run = await runCli(["forget", "token:alice", "--store", redis.url, "--config", join(dir, "codemux.json")], { cwd: dir, env: elsewhere });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // The cached answer is counted once, by whichever of this command and the instances asked deleted it.
    expect(run.stdout).toMatch(
      /^Forgot token:alice: 1 kept result, 1 skill, 2 jobs \(with their transcripts\), \d+ memories, .*2 job records in Redis, 1 cached answer in Redis, [1-9]\d* calls on the admin page's Activity\.\n/,
    );
    // The running instance was asked through Redis: it cancelled the running job and forgot what it held in memory.
    expect(run.stdout).toContain("Running instances asked: 2 instances of the Redis store.\n");
    expect(run.stdout).toContain("What a stopped instance wrote in its own CODEMUX_HOME (audit lines, its job journal) stays: run codemux forget there too.");

    expect((await fetch(`${url}/v1/results/${alice.handle}`, { headers: bearer(ALICE) })).status).toBe(404);
    // The instance running it cancelled it and forgot it: its owner no longer finds it there either.
    expect(await statusOf(alice.client, running)).toBe("not_found");
    // The running job's last record (cancelled) was written before the delete, not after it.
    for (const id of [alice.job, running]) expect(await connection.client.get(`codemux:job:${id}`)).toBeNull();
    expect(await connection.client.exists("codemux:jobs:token:alice")).toBe(0);
    expect(await cachedOf("token:alice")).toBe(0);
    // Its saved skills, memories and job transcripts in Redis went too.
    expect(await keptOf("token:alice", alice.job)).toBe(0);

    expect((await fetch(`${url}/v1/results/${bob.handle}`, { headers: bearer(BOB) })).status).toBe(200);
    expect(await connection.client.get(`codemux:job:${bob.job}`)).not.toBeNull();
    expect(await cachedOf("token:bob")).toBe(1);
    expect(await keptOf("token:bob", bob.job)).toBe(3);
  }, 60_000);

  it("deletes the same through DELETE /v1/principals on a running instance", async () => {
    const bob = await leave(BOB);
    const forgot = await fetch(`${url}/v1/principals/token:bob`, { method: "DELETE", headers: bearer(BOB) });
    expect(((await forgot.json()) as { forgotten: Record<string, number> }).forgotten).toMatchObject({ sharedJobs: 2, cachedAnswers: 1 });
    expect(await connection.client.get(`codemux:job:${bob.job}`)).toBeNull();
    expect(await cachedOf("token:bob")).toBe(0);
  });

  it("reaches every instance through Redis: DELETE /v1/principals on one empties another's Activity of the principal, and says how many answered", async () => {
    const activityOnB = async () => {
      const login = await fetch(`${urlB}/ui/login`, { method: "POST", body: new URLSearchParams({ token: BOB }), redirect: "manual" });
      const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
      return (await fetch(`${urlB}/ui/activity-rows`, { headers: { cookie } })).text();
    };
    await fetch(`${urlB}/v1/tools/m__echo/call`, { method: "POST", headers: bearer(ALICE), body: JSON.stringify({ text: "alice-on-b" }) });
    await fetch(`${urlB}/v1/tools/m__echo/call`, { method: "POST", headers: bearer(BOB), body: JSON.stringify({ text: "bob-on-b" }) });
    expect(await activityOnB()).toContain("<td>token:alice</td>");
    const forgot = await fetch(`${url}/v1/principals/alice`, { method: "DELETE", headers: bearer(BOB) });
    const { forgotten } = (await forgot.json()) as { forgotten: Record<string, number> };
    expect(forgotten.instances).toBe(1);
    expect(forgotten.activity).toBeGreaterThanOrEqual(1);
    expect(forgotten.instancesMissed).toBeUndefined();
    const rows = await activityOnB();
    expect(rows).not.toContain("<td>token:alice</td>");
    expect(rows).toContain("<td>token:bob</td>");
  });

  it("says which instance did not answer, and the route that forgets there by hand", async () => {
    // Registered (its heartbeat fresh) but not listening: an instance stopped with SIGSTOP, say.
    await connection.client.set("codemux:instance:ghost", JSON.stringify({ v: STORE_FORMAT_VERSION, address: "http://127.0.0.1:9" }), "PX", 60_000);
    try {
      const run = await runCli(["forget", "bob", "--store", redis.url, "--config", join(dir, "codemux.json")], {
        cwd: dir,
        env: { ...process.env, CODEMUX_HOME: await mkdtemp(join(dir, "home-cli-")) },
      });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain("Running instances asked: 2 instances of the Redis store.");
      expect(run.stderr).toContain(
        'forget: the codemux instance ghost at http://127.0.0.1:9/ did not answer, so what it holds of token:bob may still be there; ask it (curl -X DELETE http://127.0.0.1:9/v1/principals/token%3Abob -H "Authorization: Bearer $ADMIN_TOKEN"',
      );
    } finally {
      await connection.client.del("codemux:instance:ghost");
    }
  }, 60_000);

  it("deletes nothing and says so when Redis is not reachable", async () => {
    const nowhere = `redis://127.0.0.1:${await freePort()}`;
    const run = await runCli(["forget", "token:alice", "--store", nowhere], { cwd: dir, env: { ...process.env, CODEMUX_HOME: join(dir, "home-none") } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `Redis at ${nowhere} is not reachable (ECONNREFUSED), so nothing was deleted; start it (or fix --store) and run codemux forget again.`,
    );
  }, 30_000);
});
