import { haveProgram, misbehavingEntry, startRedisServer, until, type Nginx, type RedisServer } from "@codemux/test-servers";
import { RedisConnection, RedisStore } from "@codemux/redis";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { endParts, startBalancer } from "./scale-out-parts";
import { serveCli } from "./serve-cli";

const haveParts = haveProgram("redis-server", "redis-server") && haveProgram("nginx", "nginx-light");

const ALICE = "alice-scale-out-token-0123456789";
const BOB = "bob-scale-out-token-0123456789";
const RATE_LIMIT = 6;

type Instance = { id: string; url: string; child: ChildProcess; stderr: () => string };

describe.skipIf(!haveParts)("two codemux instances on one Redis, behind nginx", () => {
  let dir: string;
  let redis: RedisServer;
  let nginx: Nginx;
  const started: ChildProcess[] = [];
  const instances: Instance[] = [];
  const clients: Client[] = [];

  const bearer = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  const call = (base: string, token: string, { tool, args }: { tool: string; args: Record<string, unknown> }) =>
    fetch(`${base}/v1/tools/${tool}/call`, { method: "POST", headers: bearer(token), body: JSON.stringify(args) });

  async function startInstance(id: string): Promise<Instance> {
    const home = await mkdtemp(join(dir, `home-${id}-`));
    const env = { ...process.env, CODEMUX_HOME: home, CODEMUX_STORE: redis.url };
    const args = ["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--instance-id", id, "--spill-bytes", "2000"];
    const served = await serveCli([...args, "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`], { cwd: dir, env, started });
    return { id, ...served };
  }

  async function mcpClient(url: string): Promise<Client> {
    const client = new Client({ name: "scale-out-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
    clients.push(client);
    return client;
  }
  const jobIdOf = (result: unknown) => /job_[0-9a-f]{12}/.exec(JSON.stringify(result))?.[0] as string;
  const jobStatus = async (client: Client, id: string, waitSeconds = 0) => {
    const output = await client.callTool({ name: "jobs", arguments: { action: "output", ids: [id], wait_up_to: waitSeconds } });
    return output as unknown as { structuredContent: { jobs: Array<{ status: string }> }; content: Array<{ text: string }> };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-scale-out-"));
    redis = await startRedisServer();
    const config = {
      mcpServers: { m: misbehavingEntry("m") },
      plugins: {
        "rate-limit": { limits: [{ by: ["principal", "tool"], calls: RATE_LIMIT, perMs: 3_600_000, tools: ["m__echo"] }] },
        cache: { tools: ["m__counter"], ttlMs: 600_000 },
      },
    };
    await writeFile(join(dir, "codemux.json"), JSON.stringify(config));
    instances.push(await startInstance("a"), await startInstance("b"));
    nginx = await startBalancer(instances);
  }, 60_000);

  afterAll(() => endParts({ dir, redis, nginx, started, clients }));

  it("reads a result kept through one instance on the other, by its owner only", async () => {
    const [a, b] = instances as [Instance, Instance];
    const answer = (await (await call(a.url, ALICE, { tool: "m__huge", args: { bytes: 20_000, lines: true } })).json()) as { spilled: { handle: string } };
    const { handle } = answer.spilled;
    const onB = await fetch(`${b.url}/v1/results/${handle}?op=grep&pattern=line%20123:`, { headers: bearer(ALICE) });
    expect(onB.status).toBe(200);
    expect(((await onB.json()) as { text: string }).text).toContain("line 123:");
    // Through the load balancer, whichever instance answers.
    for (let i = 0; i < 4; i++) expect((await fetch(`${nginx.url}/v1/results/${handle}`, { headers: bearer(ALICE) })).status).toBe(200);
    // Another principal gets what an unknown handle gets, on either instance.
    expect((await fetch(`${b.url}/v1/results/${handle}`, { headers: bearer(BOB) })).status).toBe(404);
    expect((await fetch(`${a.url}/v1/results/${handle}`, { headers: bearer(BOB) })).status).toBe(404);
  });

  it("forgets a principal's kept results on every instance, whichever instance kept them", async () => {
    const [a, b] = instances as [Instance, Instance];
    const kept = async (base: string) =>
      ((await (await call(base, ALICE, { tool: "m__huge", args: { bytes: 20_000 } })).json()) as { spilled: { handle: string } }).spilled.handle;
    const [onA, onB] = [await kept(a.url), await kept(b.url)];
    const bobs = ((await (await call(a.url, BOB, { tool: "m__huge", args: { bytes: 20_000 } })).json()) as { spilled: { handle: string } }).spilled.handle;
    const forgot = await fetch(`${b.url}/v1/principals/token:alice`, { method: "DELETE", headers: bearer(ALICE) });
    expect(((await forgot.json()) as { forgotten: { results: number } }).forgotten.results).toBeGreaterThanOrEqual(2);
    for (const handle of [onA, onB])
      for (const base of [a.url, b.url]) expect((await fetch(`${base}/v1/results/${handle}`, { headers: bearer(ALICE) })).status).toBe(404);
    expect((await fetch(`${b.url}/v1/results/${bobs}`, { headers: bearer(BOB) })).status).toBe(200);
  });

  it("answers a cached call through one instance from the answer another instance's server gave, for the same principal only", async () => {
    const [a, b] = instances as [Instance, Instance];
    const answer = async (base: string, token: string) =>
      JSON.stringify(((await (await call(base, token, { tool: "m__counter", args: {} })).json()) as { value: unknown }).value);
    const first = await answer(a.url, ALICE);
    // b's own server would count from 1 with another pid: the same text is a's answer, from the shared cache.
    expect(await answer(b.url, ALICE)).toBe(first);
    expect(await answer(b.url, BOB)).not.toBe(first);
  });

  it("shares one rate limit: through the load balancer, both instances together let through no more than the limit", async () => {
    const answers = await Promise.all(
      Array.from({ length: RATE_LIMIT * 3 }, async () => {
        const response = await call(nginx.url, ALICE, { tool: "m__echo", args: { text: "hi" } });
        return { status: response.status, body: (await response.json()) as { error?: { message: string } } };
      }),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(RATE_LIMIT);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(RATE_LIMIT * 2);
    for (const { body } of refused)
      expect(body.error?.message).toMatch(/^Rate limited: at most 6 calls per 60 min for principal "token:alice", tool m__echo\./);
    // Another principal has its own bucket.
    expect((await call(nginx.url, BOB, { tool: "m__echo", args: { text: "hi" } })).status).toBe(200);
  });

  it("keeps serving while Redis is down, says so in /readyz and /metrics, fails calls that need it naming Redis, and loses nothing acknowledged", async () => {
    const [a, b] = instances as [Instance, Instance];
    const answer = (await (await call(a.url, ALICE, { tool: "m__huge", args: { bytes: 20_000, lines: true } })).json()) as { spilled: { handle: string } };
    const { handle } = answer.spilled;
    await redis.kill();
    await until(async () => ((await (await fetch(`${b.url}/readyz`, { headers: bearer(ALICE) })).json()) as { store?: { up: boolean } }).store?.up === false);
    const ready = await fetch(`${b.url}/readyz`, { headers: bearer(ALICE) });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ready", instance: "b", store: { kind: "redis", where: redis.url, up: false } });
    expect(await (await fetch(`${b.url}/metrics`, { headers: bearer(ALICE) })).text()).toMatch(/^codemux_redis_up 0$/m);
    // No shared state needed: the catalog is in memory.
    expect((await fetch(`${nginx.url}/v1/tools?q=echo`, { headers: bearer(ALICE) })).status).toBe(200);
    const failed = await fetch(`${b.url}/v1/results/${handle}`, { headers: bearer(ALICE) });
    expect(failed.status).toBe(503);
    expect(((await failed.json()) as { error: { message: string } }).error.message).toMatch(
      new RegExp(`^codemux could not read ${handle}\\.meta from Redis: Redis at redis://127\\.0\\.0\\.1:\\d+ did not answer`),
    );
    // A call the shared rate limit must check is refused as Redis being away, over REST as over MCP: 503 with Retry-After, naming Redis.
    const limited = await call(b.url, BOB, { tool: "m__echo", args: { text: "hi" } });
    const limitedBody = (await limited.json()) as { error: { code: string; message: string } };
    expect([limited.status, limited.headers.get("retry-after"), limitedBody.error.code]).toEqual([503, "5", "server_unavailable"]);
    expect(limitedBody.error.message).toMatch(
      /^codemux could not check the shared rate limit in Redis: Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer \(not connected\)\. Calls that need no shared state still work/,
    );
    const overMcp = await (await mcpClient(b.url)).callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "hi" } } });
    expect(JSON.stringify(overMcp.content)).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer \(not connected\)/);
    await redis.restart();
    // Each instance reconnects by itself; what Redis acknowledged before the kill is still there.
    await until(async () => (await fetch(`${b.url}/v1/results/${handle}`, { headers: bearer(ALICE) })).status === 200);
    expect(await (await fetch(`${b.url}/metrics`, { headers: bearer(ALICE) })).text()).toMatch(/^codemux_redis_up 1$/m);
    // The operator reads one line when Redis goes and one when it is back.
    await until(async () => b.stderr().includes("is back: calls that need shared state work again"));
    expect(
      b.stderr().match(/Redis at redis:\/\/127\.0\.0\.1:\d+ went away( \([A-Z]+\))?: calls that need shared state fail until it is back; reconnecting/g),
    ).toHaveLength(1);
  }, 60_000);

  it("gives a new instance the catalog at once from Redis, and codemux store import copies a files cache into Redis", async () => {
    // A new instance with an empty home and lazy servers: its tools can only come from the shared cache.
    const home = await mkdtemp(join(dir, "home-c-"));
    const env = { ...process.env, CODEMUX_HOME: home, CODEMUX_STORE: redis.url };
    const c = await serveCli(["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--lazy", "--token", `alice:${ALICE}`], {
      cwd: dir,
      env,
      started,
    });
    const tools = (await (await fetch(`${c.url}/v1/tools?q=echo`, { headers: bearer(ALICE) })).json()) as { tools: Array<{ name: string }> };
    expect(tools.tools.map((t) => t.name)).toContain("m__echo");
    const ready = await (await fetch(`${c.url}/readyz`, { headers: bearer(ALICE) })).json();
    expect(ready).toMatchObject({ servers: [{ name: "m", state: "idle" }] });
    c.child.kill("SIGTERM");

    const importHome = await mkdtemp(join(dir, "home-import-"));
    await mkdir(join(importHome, "cache"));
    await writeFile(join(importHome, "cache", "catalog-0123456789abcdef.json"), '{"version":5}');
    const imported = await runCli(["store", "import", "--store", redis.url, "--store-prefix", "imported:"], {
      cwd: dir,
      env: { ...process.env, CODEMUX_HOME: importHome },
    });
    expect(imported.stdout).toBe(`Imported 1 entry from ${join(importHome, "cache")} into ${redis.url} (prefix imported:).\n`);
    const connection = await RedisConnection.open({ url: redis.url, prefix: "imported:" });
    try {
      expect(await connection.ready(5000)).toBe(true);
      expect(await new RedisStore(connection, { name: "cache" }).read("catalog-0123456789abcdef.json")).toBe('{"version":5}');
    } finally {
      await connection.close();
    }
  }, 60_000);

  it("runs a background job on one instance, and shows its output and obeys its cancel on the other", async () => {
    const [a, b] = instances as [Instance, Instance];
    const [onA, onB] = [await mcpClient(a.url), await mcpClient(b.url)];
    const quick = jobIdOf(await onA.callTool({ name: "execute_code", arguments: { code: "export default 6 * 7;", background: true } }));
    const done = await jobStatus(onB, quick, 20);
    expect(done.structuredContent.jobs[0]?.status).toBe("completed");
    expect(JSON.parse(done.content[1]?.text ?? "{}")).toMatchObject({ result: 42 });

    const slow = 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 120000, steps: 120 });';
    const long = jobIdOf(await onA.callTool({ name: "execute_code", arguments: { code: slow, background: true } }));
    await until(async () => (await jobStatus(onB, long)).structuredContent.jobs[0]?.status === "running");
    const cancelled = await onB.callTool({ name: "jobs", arguments: { action: "cancel", ids: [long] } });
    expect(JSON.stringify(cancelled)).toContain(long);
    // The cancel reached the instance running it: both see the job end as cancelled.
    expect((await jobStatus(onB, long, 20)).structuredContent.jobs[0]?.status).toBe("cancelled");
    expect((await jobStatus(onA, long)).structuredContent.jobs[0]?.status).toBe("cancelled");
    // Another principal sees nothing of it.
    const bobs = new Client({ name: "bob", version: "1.0.0" });
    await bobs.connect(new StreamableHTTPClientTransport(new URL(`${b.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${BOB}` } } }));
    clients.push(bobs);
    expect((await jobStatus(bobs, long)).structuredContent.jobs[0]?.status).toBe("not_found");
  }, 60_000);

  it("queues a job its instance has no room for in Redis: another instance runs it, and its output and cancel work through the first", async () => {
    const [a, b] = instances as [Instance, Instance];
    const [onA, onB] = [await mcpClient(a.url), await mcpClient(b.url)];
    const slow = 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 120000, steps: 120 });';
    // a's four slots (the default) are taken by slow jobs.
    const holding: string[] = [];
    for (let i = 0; i < 4; i++) holding.push(jobIdOf(await onA.callTool({ name: "execute_code", arguments: { code: slow, background: true } })));
    for (const id of holding) await until(async () => (await jobStatus(onA, id)).structuredContent.jobs[0]?.status === "running");
    const quick = jobIdOf(await onA.callTool({ name: "execute_code", arguments: { code: "export default 6 * 7;", background: true } }));
    const done = await jobStatus(onA, quick, 20);
    expect(done.structuredContent.jobs[0]?.status).toBe("completed");
    expect(JSON.parse(done.content[1]?.text ?? "{}")).toMatchObject({ result: 42 });
    // a is still full: the job ran on b.
    for (const id of holding) expect((await jobStatus(onA, id)).structuredContent.jobs[0]?.status).toBe("running");
    const connection = await RedisConnection.open({ url: redis.url, prefix: "codemux:" });
    try {
      expect(await connection.ready(5000)).toBe(true);
      const shared = JSON.parse((await connection.client.get(`codemux:job:${quick}`)) ?? "{}") as { record?: string };
      expect(JSON.parse(shared.record ?? "{}")).toMatchObject({ instance: "b", status: "completed" });
    } finally {
      await connection.close();
    }

    // A queued job that b took is cancelled through a.
    const queued = jobIdOf(await onA.callTool({ name: "execute_code", arguments: { code: slow, background: true } }));
    // A bound, not a measure: a worker blocked on Redis may take a few seconds to take the job.
    let status = "queued";
    for (let i = 0; i < 60 && status !== "running"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      status = (await jobStatus(onB, queued)).structuredContent.jobs[0]?.status ?? "";
    }
    expect(status).toBe("running");
    await onA.callTool({ name: "jobs", arguments: { action: "cancel", ids: [queued] } });
    expect((await jobStatus(onA, queued, 20)).structuredContent.jobs[0]?.status).toBe("cancelled");
    expect((await jobStatus(onB, queued)).structuredContent.jobs[0]?.status).toBe("cancelled");
    await onA.callTool({ name: "jobs", arguments: { action: "cancel", ids: holding } });
  }, 90_000);

  it("marks a job interrupted on every instance within 30 s when the instance running it is killed", async () => {
    const [, b] = instances as [Instance, Instance];
    const d = await startInstance("d");
    const onD = await mcpClient(d.url);
    const onB = await mcpClient(b.url);
    const slow = 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 120000, steps: 120 });';
    const id = jobIdOf(await onD.callTool({ name: "execute_code", arguments: { code: slow, background: true } }));
    await until(async () => (await jobStatus(onB, id)).structuredContent.jobs[0]?.status === "running");
    d.child.kill("SIGKILL");
    await new Promise((resolve) => d.child.once("exit", resolve));
    let status = "running";
    for (let i = 0; i < 70 && status === "running"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      status = (await jobStatus(onB, id)).structuredContent.jobs[0]?.status ?? "";
    }
    expect(status).toBe("interrupted");
    expect((await jobStatus(onB, id)).content[0]?.text).toMatch(/the codemux instance that ran this job \(d\) is gone/);
  }, 60_000);

  it("keeps a 2025-era session on its instance through the load balancer, and says when that instance is gone", async () => {
    const client = new Client({ name: "scale-out-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${nginx.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } });
    await client.connect(transport);
    const sessionId = transport.sessionId ?? "";
    expect(sessionId).toMatch(/^[ab]\.[0-9a-f-]{36}$/);
    // Every call of the session lands on the instance holding it (nginx's map), which round-robin alone would not do.
    for (let i = 0; i < 4; i++) expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    // Sent to the other instance directly, the request is forwarded to the holder.
    const holder = instances.find((i) => sessionId.startsWith(`${i.id}.`)) as Instance;
    const other = instances.find((i) => i !== holder) as Instance;
    const rpc = (base: string) =>
      fetch(`${base}/mcp`, {
        method: "POST",
        headers: { ...bearer(ALICE), accept: "application/json, text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
      });
    const forwarded = await rpc(other.url);
    expect(forwarded.status).toBe(200);
    expect(await forwarded.text()).toContain("search_tools");
    await client.close().catch(() => undefined);
    holder.child.kill("SIGKILL");
    await new Promise((resolve) => holder.child.once("exit", resolve));
    // Its registration outlives it by the heartbeat's TTL at most; then the other instance answers "gone".
    await until(async () => (await rpc(other.url)).status === 404);
    const gone = (await (await rpc(other.url)).json()) as { error: { message: string } };
    expect(gone.error.message).toMatch(/the instance holding this session \([ab]\) is gone/);
  }, 60_000);
});

describe.skipIf(!haveProgram("redis-server", "redis-server"))("two codemux instances sharing pins, approvals and skills in Redis", () => {
  let dir: string;
  let redis: RedisServer;
  const started: ChildProcess[] = [];
  const homes: string[] = [];
  const urls: string[] = [];
  const clients: Client[] = [];
  // Through MCP: a refused call is a tool error the client reads.
  const echo = async (base: string) => {
    const client = new Client({ name: "shared-pins-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
    clients.push(client);
    return JSON.stringify(await client.callTool({ name: "call_tool", arguments: { name: "q__echo", args: { text: "hello" } } }));
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-shared-pins-"));
    redis = await startRedisServer();
    // Every server is new to the deployment: its tools wait for an approval, which any instance may give.
    const config = { mcpServers: { q: misbehavingEntry("q") }, plugins: { pin: { quarantineNewServers: true } } };
    await writeFile(join(dir, "codemux.json"), JSON.stringify(config));
    for (const id of ["a", "b"]) {
      const home = await mkdtemp(join(dir, `home-${id}-`));
      homes.push(home);
      const env = { ...process.env, CODEMUX_HOME: home, CODEMUX_STORE: redis.url };
      const args = ["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--instance-id", id, "--token", `alice:${ALICE}`];
      urls.push((await serveCli(args, { cwd: dir, env, started })).url);
    }
  }, 60_000);

  afterAll(() => endParts({ clients, started, redis, dir }));

  it("lets a tool quarantined on one instance through on it once it is approved with B's setting", async () => {
    const [a] = urls as [string];
    // Waiting for its first approval, a new server's tool has no definition the model may see: it is unknown until approved.
    expect(await echo(a)).toContain('No tool named \\"q__echo\\"');
    // codemux approve as instance b runs it: b's own CODEMUX_HOME (no pin file there), the shared store.
    const env = { ...process.env, CODEMUX_HOME: homes[1], CODEMUX_STORE: redis.url };
    const listed = await runCli(["approve", "--list", "--config", join(dir, "codemux.json")], { cwd: dir, env });
    expect(listed.stdout).toContain("q__echo (new server)");
    const approved = await runCli(["approve", "q", "--config", join(dir, "codemux.json")], { cwd: dir, env });
    expect(approved.stderr).toBe("");
    expect(approved.stdout).toContain("q__echo");
    // Each instance reads the shared book again while it holds a tool back (every 2 s), then shows and lets it through.
    await until(async () => (await echo(a)).includes("hello"));
    await until(async () => (await echo(urls[1] as string)).includes("hello"));
  });
});
