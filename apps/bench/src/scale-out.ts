import { affinityConfig, haveProgram, misbehavingEntry, startNginx, startRedisServer, type Nginx, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCodemux } from "./http-latency";
import { percentile, round, timed } from "./stats";

type Table = (title: string, rows: Array<[string, string | number, string?]>) => void;

const TOKEN = "bench-scale-token-0123456789abcdef";
const CLIENTS = 50;
const READ_SAMPLES = 200;
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

export interface SetupStats {
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of the codemux processes (user + system) per call; the load generator, nginx and Redis are not counted. */
  cpuMsPerCall: number;
  errors: number;
}

export interface ScaleOutReport {
  clients: number;
  seconds: number;
  setups: { oneFiles: SetupStats; oneRedis: SetupStats; twoBehindNginx: SetupStats };
  /** `GET /v1/results/{handle}` of a 20 kB kept result, p50: files store, Redis store, and the difference. */
  readResult: { filesP50Ms: number; redisP50Ms: number; addedP50Ms: number; samples: number };
  /** `jobs {action:"output"}` of a finished background job, p50: on files through its own instance, on Redis through the other one. */
  jobOutput: { filesP50Ms: number; redisP50Ms: number; addedP50Ms: number; samples: number };
}

/** CPU ticks (user + system) a process has used, from /proc; NaN where there is none. */
function cpuTicks(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return Number.NaN;
  }
}

/** 50 REST clients calling m__echo against `base` for `seconds`; the CPU of `children` is measured around it. */
async function load(base: string, children: ChildProcess[], seconds: number): Promise<SetupStats> {
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const call = () => fetch(`${base}/v1/tools/m__echo/call`, { method: "POST", headers, body: '{"text":"ping"}' }).then((r) => r.status);
  for (let i = 0; i < 20; i++) await call();
  const samples: number[] = [];
  let errors = 0;
  const before = children.map((c) => cpuTicks(c.pid));
  const started = performance.now();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < deadline) {
        const [ms, status] = await timed(call).catch(() => [0, 0] as [number, number]);
        if (status === 200) samples.push(ms);
        else errors++;
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  const ticks = children.reduce((sum, c, i) => sum + cpuTicks(c.pid) - (before[i] ?? 0), 0);
  return {
    callsPerSecond: round(samples.length / elapsedS, 0),
    p50Ms: round(percentile(samples, 50), 2),
    p99Ms: round(percentile(samples, 99), 2),
    cpuMsPerCall: round(((ticks / TICKS_PER_SECOND) * 1000) / Math.max(1, samples.length), 3),
    errors,
  };
}

/** p50 of reading one kept result through `base` (kept there first). */
async function readResultP50(base: string): Promise<number> {
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const kept = (await (await fetch(`${base}/v1/tools/m__huge/call`, { method: "POST", headers, body: '{"bytes":20000,"lines":true}' })).json()) as {
    spilled: { handle: string };
  };
  const read = () => fetch(`${base}/v1/results/${kept.spilled.handle}?op=grep&pattern=line%20123:`, { headers }).then((r) => r.text());
  for (let i = 0; i < 20; i++) await read();
  const times: number[] = [];
  for (let i = 0; i < READ_SAMPLES; i++) times.push((await timed(read))[0]);
  return percentile(times, 50);
}

/** An MCP client of `base` as the bench's principal. */
async function mcpClient(base: string): Promise<Client> {
  const client = new Client({ name: "bench-scale-out", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  return client;
}

/** p50 of `jobs {action:"output"}` of one finished job started through `startAt` and read through `readAt`. */
async function jobOutputP50(startAt: string, readAt: string): Promise<number> {
  const starter = await mcpClient(startAt);
  const reader = readAt === startAt ? starter : await mcpClient(readAt);
  try {
    const started = await starter.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "job" }, background: true } });
    const id = /job_[0-9a-f]{12}/.exec(JSON.stringify(started))?.[0];
    await starter.callTool({ name: "jobs", arguments: { action: "output", ids: [id], wait_up_to: 20 } });
    const read = () => reader.callTool({ name: "jobs", arguments: { action: "output", ids: [id], wait_up_to: 0 } });
    for (let i = 0; i < 20; i++) await read();
    const times: number[] = [];
    for (let i = 0; i < READ_SAMPLES; i++) times.push((await timed(read))[0]);
    return percentile(times, 50);
  } finally {
    await starter.close();
    if (reader !== starter) await reader.close();
  }
}

/**
 * Scale-out: 50 REST clients against one instance on files, one on Redis, and two on Redis behind
 * nginx (routing as docs/scale-out.md says); calls per second, p50/p99 and codemux's CPU per call;
 * then the added latency of a Redis-backed read_result and of a job's output read through another
 * instance. Needs redis-server and nginx.
 */
export async function runScaleOut(options: { seconds?: number } = {}): Promise<ScaleOutReport | null> {
  if (!haveProgram("redis-server", "redis-server") || !haveProgram("nginx", "nginx-light")) return null;
  const seconds = options.seconds ?? Number(process.env.CODEMUX_BENCH_SCALE_SECONDS ?? 10);
  const dir = await mkdtemp(join(tmpdir(), "codemux-bench-scale-"));
  const configFile = join(dir, "codemux.json");
  // One address and one token stand for 50 clients: the per-address share is raised to fit them.
  await writeFile(configFile, JSON.stringify({ mcpServers: { m: misbehavingEntry("m") }, http: { limits: { connectionsPerAddress: 256 } } }));
  const started: ChildProcess[] = [];
  let redis: RedisServer | undefined;
  let nginx: Nginx | undefined;
  try {
    redis = await startRedisServer();
    const env = { CODEMUX_TOKEN: `bench:${TOKEN}` };
    const redisArgs = (id: string) => ["--store", (redis as RedisServer).url, "--instance-id", id, "--spill-bytes", "2000"];
    const files = await startCodemux(configFile, { env, args: ["--spill-bytes", "2000"] });
    const a = await startCodemux(configFile, { env, args: redisArgs("a") });
    const b = await startCodemux(configFile, { env, args: redisArgs("b") });
    started.push(files.child, a.child, b.child);
    nginx = await startNginx((port) =>
      affinityConfig(
        [a, b].map((x, i) => ({ id: i === 0 ? "a" : "b", address: new URL(x.url).host })),
        port,
      ),
    );
    const oneFiles = await load(files.url, [files.child], seconds);
    const oneRedis = await load(a.url, [a.child], seconds);
    const twoBehindNginx = await load(nginx.url, [a.child, b.child], seconds);
    const filesP50Ms = await readResultP50(files.url);
    const redisP50Ms = await readResultP50(a.url);
    const jobFilesP50Ms = await jobOutputP50(files.url, files.url);
    const jobRedisP50Ms = await jobOutputP50(a.url, b.url);
    return {
      clients: CLIENTS,
      seconds,
      setups: { oneFiles, oneRedis, twoBehindNginx },
      readResult: { filesP50Ms: round(filesP50Ms, 3), redisP50Ms: round(redisP50Ms, 3), addedP50Ms: round(redisP50Ms - filesP50Ms, 3), samples: READ_SAMPLES },
      jobOutput: {
        filesP50Ms: round(jobFilesP50Ms, 3),
        redisP50Ms: round(jobRedisP50Ms, 3),
        addedP50Ms: round(jobRedisP50Ms - jobFilesP50Ms, 3),
        samples: READ_SAMPLES,
      },
    };
  } finally {
    for (const child of started) child.kill("SIGTERM");
    await nginx?.stop();
    await redis?.stop();
  }
}

export async function reportScaleOut(table: Table): Promise<ScaleOutReport | null> {
  const r = await runScaleOut();
  if (!r) return null;
  const row = (name: string, s: SetupStats): [string, string, string] => [
    name,
    `${s.callsPerSecond} calls/s`,
    `p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, codemux CPU ${s.cpuMsPerCall} ms/call, ${s.errors} errors`,
  ];
  table(`Scale-out: ${r.clients} REST clients calling m__echo for ${r.seconds} s each (load generator on the same machine)`, [
    row("one instance, files", r.setups.oneFiles),
    row("one instance, Redis store", r.setups.oneRedis),
    row("two instances on Redis behind nginx", r.setups.twoBehindNginx),
    ["read_result of a 20 kB kept result, p50", `files ${r.readResult.filesP50Ms} ms / Redis ${r.readResult.redisP50Ms} ms`, `+${r.readResult.addedP50Ms} ms`],
    [
      "jobs output of a finished job, p50 (Redis: read through the other instance)",
      `files ${r.jobOutput.filesP50Ms} ms / Redis ${r.jobOutput.redisP50Ms} ms`,
      `+${r.jobOutput.addedP50Ms} ms`,
    ],
  ]);
  return r;
}
