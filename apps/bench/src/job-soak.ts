import { haveProgram, misbehavingEntry, startRedisServer, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCodemux } from "./http-latency";

type Table = (title: string, rows: Array<[string, string | number, string?]>) => void;

const TOKEN = "bench-soak-token-0123456789abcdef";
const CLIENTS = 4;
const TERMINAL = new Set(["completed", "failed", "cancelled", "interrupted"]);

export interface JobSoakReport {
  seconds: number;
  clients: number;
  acknowledged: number;
  terminal: number;
  /** Acknowledged, still queued or running on an instance that is alive when asked. */
  pending: number;
  lost: number;
  faults: string[];
  /** The first few jobs still pending, as instance a reports them. */
  pendingSample: string[];
}

interface Instance {
  id: string;
  home: string;
  child: ChildProcess;
  url: string;
}

async function client(url: string): Promise<Client> {
  const c = new Client({ name: "bench-job-soak", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  return c;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Jobs soak (issue 43 item 14): two `codemux serve` instances on one Redis with append-only
 * persistence, four clients starting background jobs through both, a Redis SIGKILL and restart,
 * then instance b killed and started again with the same id and home. Every acknowledged job is
 * then looked up through instance a: terminal, still pending, or lost ("not_found").
 */
export async function runJobSoak(options: { seconds?: number } = {}): Promise<JobSoakReport | null> {
  if (!haveProgram("redis-server", "redis-server")) return null;
  const seconds = options.seconds ?? Number(process.env.CODEMUX_BENCH_SOAK_SECONDS ?? 30);
  const dir = await mkdtemp(join(tmpdir(), "codemux-bench-soak-"));
  const configFile = join(dir, "codemux.json");
  await writeFile(
    configFile,
    JSON.stringify({ mcpServers: { m: misbehavingEntry("m") }, http: { limits: { connectionsPerAddress: 256, perPrincipal: { jobs: 50 } } } }),
  );
  let redis: RedisServer | undefined;
  const instances: Instance[] = [];
  const faults: string[] = [];
  const start = async (id: string, home?: string): Promise<Instance> => {
    const own = home ?? (await mkdtemp(join(tmpdir(), `codemux-bench-soak-${id}-`)));
    const started = await startCodemux(configFile, {
      env: { CODEMUX_TOKEN: `bench:${TOKEN}`, CODEMUX_HOME: own },
      args: ["--store", (redis as RedisServer).url, "--instance-id", id],
    });
    return { id, home: own, ...started };
  };
  try {
    redis = await startRedisServer({ appendfsync: "always" });
    instances.push(await start("a"), await start("b"));
    const acknowledged: string[] = [];
    let stop = false;
    const worker = async (n: number) => {
      let at = instances[n % 2] as Instance;
      let c = await client(at.url).catch(() => undefined);
      while (!stop) {
        try {
          if (!c || instances[n % 2] !== at) {
            at = instances[n % 2] as Instance;
            await c?.close().catch(() => undefined);
            c = await client(at.url);
          }
          const answer = await c.callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 200 }, background: true } });
          const id = /job_[0-9a-f]{12}/.exec(JSON.stringify(answer.content))?.[0];
          if (id && !answer.isError) acknowledged.push(id);
          else await sleep(100);
        } catch {
          c = undefined;
          await sleep(200);
        }
      }
      await c?.close().catch(() => undefined);
    };
    const workers = Array.from({ length: CLIENTS }, (_, n) => worker(n));
    await sleep((seconds * 1000) / 3);
    await redis.kill();
    await redis.restart();
    faults.push(`Redis killed (SIGKILL) and restarted at ${Math.round(seconds / 3)} s`);
    await sleep((seconds * 1000) / 3);
    const b = instances[1] as Instance;
    b.child.kill("SIGKILL");
    instances[1] = await start("b", b.home);
    faults.push(`instance b killed (SIGKILL) and started again with the same id and home at ${Math.round((2 * seconds) / 3)} s`);
    await sleep((seconds * 1000) / 3);
    stop = true;
    await Promise.all(workers);
    // Let the last jobs end, then ask for every acknowledged one through instance a.
    await sleep(3_000);
    const reader = await client((instances[0] as Instance).url);
    let terminal = 0;
    let pending = 0;
    let lost = 0;
    const pendingSample: string[] = [];
    for (let i = 0; i < acknowledged.length; i += 20) {
      const ids = acknowledged.slice(i, i + 20);
      const out = await reader.callTool({ name: "jobs", arguments: { action: "output", ids, wait_up_to: 0 } });
      for (const job of (out.structuredContent as { jobs: Array<{ id: string; status: string }> }).jobs) {
        if (TERMINAL.has(job.status)) terminal++;
        else if (job.status === "not_found") lost++;
        else if (++pending <= 5) pendingSample.push(JSON.stringify(job).slice(0, 300));
      }
    }
    await reader.close();
    return { seconds, clients: CLIENTS, acknowledged: acknowledged.length, terminal, pending, lost, faults, pendingSample };
  } finally {
    for (const instance of instances) instance.child.kill("SIGTERM");
    await redis?.stop();
  }
}

export async function reportJobSoak(table: Table): Promise<JobSoakReport | null> {
  const r = await runJobSoak();
  if (!r) return null;
  table(`Jobs soak: ${r.clients} clients starting background jobs through two instances on Redis (appendfsync always) for ${r.seconds} s`, [
    ["faults", r.faults.join("; ")],
    ["acknowledged", r.acknowledged],
    ["terminal, read through instance a", r.terminal],
    ["still queued or running", r.pending],
    ["lost (not_found)", r.lost],
  ]);
  return r;
}
