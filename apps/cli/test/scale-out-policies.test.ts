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

/** A policy rule's limits over two real instances on one real redis-server: they hold for the deployment, not per instance. */
const TOKENS = {
  carol: "carol-policy-limits-0123456789",
  dave: "dave-policy-limits-0123456789",
  alice: "alice-policy-limits-0123456789",
  erin: "erin-policy-limits-0123456789",
};
type Who = keyof typeof TOKENS;
const CALLS_PER_MINUTE = 4;
const JOBS_AT_ONCE = 2;
const SLOW = 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 120000, steps: 120 });';

describe.skipIf(!haveProgram("redis-server", "redis-server"))("a policy's limits across two codemux instances on one Redis", () => {
  let dir: string;
  let redis: RedisServer;
  const urls: string[] = [];
  const started: ChildProcess[] = [];
  const clients: Client[] = [];

  const call = (url: string, who: Who, text: string) =>
    fetch(`${url}/v1/tools/m__echo/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKENS[who]}`, "content-type": "application/json" },
      body: JSON.stringify({ text }),
    });
  const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
  async function connect(url: string, who: Who): Promise<Client> {
    const client = new Client({ name: `limits-${who}`, version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } } }));
    clients.push(client);
    return client;
  }
  const background = async (client: Client) => textOf(await client.callTool({ name: "execute_code", arguments: { code: SLOW, background: true } }));
  const jobIdOf = (text: string) => /job_[0-9a-f]{12}/.exec(text)?.[0];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-policy-limits-"));
    redis = await startRedisServer();
    const config = {
      mcpServers: { m: misbehavingEntry("m") },
      policies: {
        default: "allow",
        rules: [
          { name: "metered", principals: ["carol"], tools: ["m"], callsPerMinute: CALLS_PER_MINUTE },
          { name: "batch", principals: ["dave"], tools: ["m"], concurrentJobs: JOBS_AT_ONCE },
          // One call a minute: a spent call stays spent for longer than a test may take, whatever the load.
          { name: "sparse", principals: ["erin"], tools: ["m"], callsPerMinute: 1 },
        ],
      },
    };
    await writeFile(join(dir, "codemux.json"), JSON.stringify(config));
    const tokens = Object.entries(TOKENS).flatMap(([name, token]) => ["--token", `${name}:${token}`]);
    for (const id of ["a", "b"]) {
      const env = { ...process.env, CODEMUX_HOME: await mkdtemp(join(dir, `home-${id}-`)), CODEMUX_STORE: redis.url };
      const args = ["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--instance-id", id, ...tokens];
      urls.push((await serveCli(args, { cwd: dir, env, started })).url);
    }
  }, 60_000);

  afterAll(() => endParts({ dir, redis, started, clients }));

  it(`lets ${CALLS_PER_MINUTE} calls a minute through the two instances together, not ${CALLS_PER_MINUTE} through each`, async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 2 * CALLS_PER_MINUTE; i++) statuses.push((await call(urls[i % 2] as string, "carol", `call ${i}`)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(CALLS_PER_MINUTE);
    expect(statuses.slice(CALLS_PER_MINUTE)).toEqual(Array(CALLS_PER_MINUTE).fill(429));
    const refused = await call(urls[1] as string, "carol", "one more");
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(JSON.stringify(await refused.json())).toContain(
      `the policy rule \\"metered\\" allows principal \\"token:carol\\" ${CALLS_PER_MINUTE} calls a minute`,
    );
    // Another principal is not held back by carol's limit.
    expect((await call(urls[0] as string, "alice", "free")).status).toBe(200);
  });

  it(`counts a principal's ${JOBS_AT_ONCE} background jobs at once on both instances together, and frees a place when one ends`, async () => {
    const [onA, onB] = [await connect(urls[0] as string, "dave"), await connect(urls[1] as string, "dave")];
    const first = jobIdOf(await background(onA));
    expect(jobIdOf(await background(onB))).toBeDefined();
    for (const client of [onA, onB]) {
      const refused = await background(client);
      expect(jobIdOf(refused)).toBeUndefined();
      expect(refused).toContain(
        `Principal "token:dave" already has ${JOBS_AT_ONCE} background jobs on the instances of this deployment, as many as its policy allows at once (concurrentJobs: ${JOBS_AT_ONCE})`,
      );
    }
    // The job started on a ends, cancelled through b: its place is free for the next, wherever it starts.
    await onB.callTool({ name: "jobs", arguments: { action: "cancel", ids: [first] } });
    await until(async () => jobIdOf(await background(onB)) !== undefined);
  }, 60_000);

  it("refuses what needs the shared count while Redis is down, naming it, lets the rest through, and counts on once it is back", async () => {
    const dave = await connect(urls[0] as string, "dave");
    expect((await call(urls[0] as string, "erin", "before")).status).toBe(200);
    await redis.kill();
    try {
      const metered = await call(urls[0] as string, "erin", "while down");
      expect(metered.status).toBe(503);
      expect(metered.headers.get("retry-after")).toBe("5");
      expect(JSON.stringify(await metered.json())).toContain(`Redis at redis://127.0.0.1:${redis.port} did not answer`);
      const job = await background(dave);
      expect(jobIdOf(job)).toBeUndefined();
      expect(job).toContain(`Redis at redis://127.0.0.1:${redis.port} did not answer`);
      // A principal whose rule counts nothing goes on.
      expect((await call(urls[1] as string, "alice", "while down")).status).toBe(200);
    } finally {
      await redis.restart();
    }
    // Back: the count was kept (Redis persists it), so erin's minute is still spent on every instance, each once it has reconnected.
    for (const url of urls) {
      let status = 503;
      await until(async () => (status = (await call(url, "erin", "back")).status) !== 503);
      expect(status).toBe(429);
    }
  }, 60_000);
});
