import { haveProgram, misbehavingEntry, startRedisServer, type RedisServer } from "@codemux/test-servers";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
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
  /** Of them, by the era of the client that started them. */
  byEra: { "2025": number; "2026": number };
  terminal: number;
  /** Acknowledged, still queued or running on an instance that is alive when asked. */
  pending: number;
  lost: number;
  faults: string[];
  /** The first few jobs still pending, as instance a reports them. */
  pendingSample: string[];
  /** Seconds after the clients stopped until every acknowledged job was terminal (or the bound, 60 s, when some never were). */
  settledSeconds: number;
}

interface Instance {
  id: string;
  home: string;
  child: ChildProcess;
  url: string;
}

/** What the soak needs of a client of either era. */
interface SoakClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<{ content?: unknown; isError?: boolean; structuredContent?: unknown }>;
  close(): Promise<void>;
}

/** A client of the 2025 era (SDK 1.x), or of the 2026 era (SDK 2, negotiating the newest version). */
async function client(url: string, era: "2025" | "2026" = "2025"): Promise<SoakClient> {
  const requestInit = { headers: { authorization: `Bearer ${TOKEN}` } };
  if (era === "2026") {
    const modern = new ModernClient({ name: "bench-job-soak-2026", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await modern.connect(new ModernTransport(new URL(`${url}/mcp`), { requestInit }));
    return modern as unknown as SoakClient;
  }
  const c = new Client({ name: "bench-job-soak", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit }));
  return c as unknown as SoakClient;
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
  // How long Redis stays down before its restart (CODEMUX_BENCH_SOAK_REDIS_DOWN_MS; 0 by default).
  const downMs = Number(process.env.CODEMUX_BENCH_SOAK_REDIS_DOWN_MS ?? 0);
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
    // CODEMUX_BENCH_SOAK_LOGS=<dir>: each instance's warnings go to <dir>/<id>.log, to find where a job went.
    const logs = process.env.CODEMUX_BENCH_SOAK_LOGS;
    if (logs) started.child.stderr?.pipe(createWriteStream(join(logs, `${id}.log`), { flags: "a" }));
    return { id, home: own, ...started };
  };
  try {
    redis = await startRedisServer({ appendfsync: "always" });
    instances.push(await start("a"), await start("b"));
    const tally: Acknowledged = { ids: [], byEra: { "2025": 0, "2026": 0 }, stop: false };
    const workers = Array.from({ length: CLIENTS }, (_, n) => soakWorker(n, instances, tally));
    await sleep((seconds * 1000) / 3);
    await redis.kill();
    await sleep(downMs);
    await redis.restart();
    faults.push(`Redis killed (SIGKILL) at ${Math.round(seconds / 3)} s and restarted ${downMs} ms later`);
    await sleep((seconds * 1000) / 3);
    const b = instances[1] as Instance;
    b.child.kill("SIGKILL");
    instances[1] = await start("b", b.home);
    faults.push(`instance b killed (SIGKILL) and started again with the same id and home at ${Math.round((2 * seconds) / 3)} s`);
    await sleep((seconds * 1000) / 3);
    tally.stop = true;
    await Promise.all(workers);
    const { count, settledSeconds } = await settle((instances[0] as Instance).url, tally.ids);
    return { seconds, clients: CLIENTS, acknowledged: tally.ids.length, byEra: tally.byEra, ...count, faults, settledSeconds };
  } finally {
    for (const instance of instances) instance.child.kill("SIGTERM");
    await redis?.stop();
  }
}

/** The jobs the instances acknowledged, by the era of the client that started them; `stop` ends the clients' loops. */
interface Acknowledged {
  ids: string[];
  byEra: { "2025": number; "2026": number };
  stop: boolean;
}

/** Clients 0 and 1 speak the 2025 era, 2 and 3 the 2026 era; 0 and 2 go to instance a, 1 and 3 to b. */
const eraOf = (n: number) => (n < 2 ? "2025" : "2026");

/** Client `n`: starts background jobs until told to stop, reconnecting when its instance was replaced or its connection failed. */
async function soakWorker(n: number, instances: Instance[], tally: Acknowledged): Promise<void> {
  let at = instances[n % 2] as Instance;
  let c = await client(at.url, eraOf(n)).catch(() => undefined);
  while (!tally.stop) {
    try {
      if (!c || instances[n % 2] !== at) {
        at = instances[n % 2] as Instance;
        await c?.close().catch(() => undefined);
        c = await client(at.url, eraOf(n));
      }
      const answer = await c.callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 200 }, background: true } });
      const id = /job_[0-9a-f]{12}/.exec(JSON.stringify(answer.content))?.[0];
      if (id && !answer.isError) {
        tally.ids.push(id);
        tally.byEra[eraOf(n)]++;
      } else await sleep(100);
    } catch {
      c = undefined;
      await sleep(200);
    }
  }
  await c?.close().catch(() => undefined);
}

type JobCount = { terminal: number; pending: number; lost: number; pendingSample: string[] };

/**
 * Asks for every acknowledged job through the instance at `url` until all are terminal (a job whose taker died is handed out
 * again once its lock lapses, 10 s), at most a minute.
 */
async function settle(url: string, acknowledged: string[]): Promise<{ count: JobCount; settledSeconds: number }> {
  const stopped = performance.now();
  const reader = await client(url);
  let count: JobCount;
  do {
    await sleep(1_000);
    count = await countJobs(reader, acknowledged);
  } while (count.pending > 0 && performance.now() - stopped < 60_000);
  await reader.close();
  return { count, settledSeconds: Math.round((performance.now() - stopped) / 100) / 10 };
}

/** The acknowledged jobs as `reader`'s instance reports them now: terminal, pending (the first few shown) or lost. */
async function countJobs(reader: SoakClient, acknowledged: string[]): Promise<JobCount> {
  const count: JobCount = { terminal: 0, pending: 0, lost: 0, pendingSample: [] };
  for (let i = 0; i < acknowledged.length; i += 20) {
    const ids = acknowledged.slice(i, i + 20);
    const out = await reader.callTool({ name: "jobs", arguments: { action: "output", ids, wait_up_to: 0 } });
    for (const job of (out.structuredContent as { jobs: Array<{ id: string; status: string }> }).jobs) {
      if (TERMINAL.has(job.status)) count.terminal++;
      else if (job.status === "not_found") count.lost++;
      else if (++count.pending <= 5) count.pendingSample.push(JSON.stringify(job).slice(0, 300));
    }
  }
  return count;
}

export async function reportJobSoak(table: Table): Promise<JobSoakReport | null> {
  const r = await runJobSoak();
  if (!r) return null;
  table(
    `Jobs soak: ${r.clients} clients (two 2025-era, two 2026-era) starting background jobs through two instances on Redis (appendfsync always) for ${r.seconds} s`,
    [
      ["faults", r.faults.join("; ")],
      ["acknowledged", r.acknowledged, `2025 era ${r.byEra["2025"]}, 2026 era ${r.byEra["2026"]}`],
      ["terminal, read through instance a", r.terminal],
      ["still queued or running", r.pending],
      ["all terminal after (s)", r.settledSeconds],
      ["lost (not_found)", r.lost],
      ...r.pendingSample.map((job, i): [string, string, string] => [`pending ${i + 1}`, "", job]),
    ],
  );
  return r;
}
