import { freePort, misbehavingServerPath, modernServerPath } from "@codemux/test-servers";
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { cliPath, repoRoot } from "./paths";
import { closedLoop, connectTo, type ClientSpec, type LoopBudget, type LoopResult, type Payload } from "./peers-client";
import { percentile, round } from "./stats";

/**
 * codemux side by side with the gateways users would pick instead (pinned devDependencies of this
 * app), in front of the same stdio downstream server: an echo answering at once and a ~20 KB
 * answer, 1 and 50 SDK 1.x clients (each its own session), Streamable HTTP and legacy SSE.
 * Every gateway is started afresh for each block and the blocks are interleaved across rounds, so
 * load from elsewhere on the machine falls on all alike. CPU is the gateway process's own
 * (utime + stime from /proc, its stdio children not included), peak RSS its VmHWM; the server's
 * (the processes below the gateway) and the bench's own clients' CPU per call are beside it, as the
 * three share the machine's cores: at 50 clients the calls/s follow the sum.
 */

const TOKEN = "bench-peers-0123456789abcdef";

type Wire = "streamable" | "sse" | "rest" | "stdio";

interface Started {
  child: ChildProcess;
  /** The process whose CPU and RSS are the gateway's (undefined for the direct client). */
  pid: number | undefined;
  /** How a client connects (handed to the worker threads that run the clients). */
  client: ClientSpec;
}

interface Entry {
  name: string;
  wire: Wire;
  era: "2025" | "2026";
  /** Whether it can take 50 clients at once (the direct stdio client is one process). */
  load: boolean;
  start: () => Promise<Started>;
}

export interface PeerRow {
  gateway: string;
  wire: Wire;
  era: "2025" | "2026";
  payload: Payload;
  clients: number;
  round: number;
  calls: number;
  errors: number;
  firstError?: string;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Gateway CPU per call in µs (utime + stime of its process over the block). */
  cpuPerCallUs: number | null;
  /**
   * The downstream server's CPU per call in µs (the processes below the gateway; for the direct client, below the bench):
   * what a gateway's requests cost the server, which shares the machine's cores with it.
   */
  serverCpuPerCallUs?: number | null;
  /** The bench's own CPU per call in µs (its clients parse the gateway's answers): the third share of the cores. */
  clientCpuPerCallUs?: number | null;
  peakRssMB: number | null;
  load1: number;
}

export interface PeersReport {
  machine: { cpu: string; cores: number; memGB: number; node: string; date: string };
  quick: boolean;
  /** The rounds and budgets the run had (see `peersBudget`). */
  rounds: number;
  budget: Block["budget"];
  rows: PeerRow[];
}

const serverOf = (era: "2025" | "2026") => (era === "2025" ? misbehavingServerPath : modernServerPath);

function binOf(pkg: string): string {
  const dir = join(repoRoot(), "apps/bench/node_modules", pkg);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === "string" ? manifest.bin : (Object.values(manifest.bin)[0] as string);
  return join(dir, bin);
}

/** The process ids below `pid` (children, theirs, ...), from /proc (Linux); none when it has gone. */
function descendants(pid: number): number[] {
  const found: number[] = [];
  const next = [pid];
  while (next.length > 0) {
    const at = next.pop() as number;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${at}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children = "";
      try {
        children = readFileSync(`/proc/${at}/task/${task}/children`, "utf8");
      } catch {
        // The thread ended between the two reads: it has no children left to count.
      }
      for (const child of children.split(" ").filter(Boolean).map(Number)) {
        found.push(child);
        next.push(child);
      }
    }
  }
  return found;
}

/** utime + stime of the processes below `pid` in seconds: a gateway's stdio servers (and any shell between). */
const treeCpuSeconds = (pid: number): number => descendants(pid).reduce((sum, child) => sum + (cpuSeconds(child) || 0), 0);

/** utime + stime of a process in seconds, from /proc (Linux). */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

function peakRssMB(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    return Number.isFinite(kb) ? round(kb / 1024, 1) : null;
  } catch {
    return null;
  }
}

/** Retries `connect` until the gateway answers (it may still be starting its downstream). */
async function ready<T>(connect: () => Promise<T>, child: ChildProcess, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  let last: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode})`);
    try {
      return await connect();
    } catch (error) {
      last = error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`${what} did not answer in 30 s: ${last instanceof Error ? last.message : String(last)}`);
}

function launch(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
}

async function codemux(era: "2025" | "2026", wire: Wire, { mode, cli = cliPath() }: { mode: "passthrough" | "code"; cli?: string }): Promise<Started> {
  const dir = await mkdtemp(join(tmpdir(), "codemux-bench-peers-"));
  const config = join(dir, "codemux.json");
  // The default configuration: limits, auth (one token), policies and isolation as shipped.
  await writeFile(config, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [serverOf(era)] } } }));
  const port = await freePort();
  const child = launch([cli, "serve", "--http", `127.0.0.1:${port}`, "--config", config, "--no-watch", "--log-level", "error", "--mode", mode], {
    CODEMUX_TOKEN: `bench:${TOKEN}`,
    CODEMUX_HOME: dir,
  });
  child.stderr?.resume();
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${TOKEN}` };
  const client: ClientSpec =
    wire === "rest"
      ? { kind: "rest", base, headers }
      : { kind: "mcp", url: `${base}/${wire === "sse" ? "sse" : "mcp"}`, wire: wire === "sse" ? "sse" : "streamable", headers, codeMode: mode === "code" };
  // Ready when an MCP client gets in (a REST client alone would not wait for the port).
  await ready(async () => (await connectTo({ kind: "mcp", url: `${base}/mcp`, wire: "streamable", headers, codeMode: true })).close(), child, "codemux");
  return { child, pid: child.pid, client };
}

function baselineEntries(cli: string | undefined): Entry[] {
  if (!cli) return [];
  return (
    [
      ["streamable", "2025"],
      ["streamable", "2026"],
      ["sse", "2025"],
    ] as const
  ).map(([wire, era]) => ({
    name: "codemux baseline passthrough",
    wire,
    era,
    load: true,
    start: () => codemux(era, wire, { mode: "passthrough", cli }),
  }));
}

const entries: Entry[] = [
  {
    name: "direct (stdio, no gateway)",
    wire: "stdio",
    era: "2025",
    load: false,
    start: async () => {
      const child = launch(["-e", "setInterval(() => {}, 1 << 30)"]);
      return {
        child,
        pid: undefined,
        client: { kind: "stdio", command: process.execPath, args: [misbehavingServerPath] },
      };
    },
  },
  { name: "codemux passthrough", wire: "streamable", era: "2025", load: true, start: () => codemux("2025", "streamable", { mode: "passthrough" }) },
  { name: "codemux call_tool (code mode)", wire: "streamable", era: "2025", load: true, start: () => codemux("2025", "streamable", { mode: "code" }) },
  { name: "codemux REST /v1/tools/.../call", wire: "rest", era: "2025", load: true, start: () => codemux("2025", "rest", { mode: "code" }) },
  { name: "codemux passthrough", wire: "sse", era: "2025", load: true, start: () => codemux("2025", "sse", { mode: "passthrough" }) },
  { name: "codemux passthrough", wire: "streamable", era: "2026", load: true, start: () => codemux("2026", "streamable", { mode: "passthrough" }) },
  // An older build beside this one, in the same interleaved rounds (before/after a change on one loaded machine).
  ...baselineEntries(process.env.CODEMUX_BENCH_BASELINE_CLI),
  // In front of either era's server: a 2026-era server also serves mcp-hub's 2025 client, so both rows cost the same server.
  ...(["2025", "2026"] as const).map(
    (era): Entry => ({
      name: "mcp-hub 4.2.1",
      wire: "sse",
      era,
      load: true,
      start: async () => {
        const dir = await mkdtemp(join(tmpdir(), "codemux-bench-hub-"));
        const config = join(dir, "mcp-servers.json");
        await writeFile(config, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [serverOf(era)] } } }));
        const port = await freePort();
        const child = launch([binOf("mcp-hub"), "--port", String(port), "--config", config], { HOME: dir, XDG_STATE_HOME: dir, XDG_DATA_HOME: dir });
        child.stderr?.resume();
        const client: ClientSpec = { kind: "mcp", url: `http://127.0.0.1:${port}/mcp`, wire: "sse" };
        await ready(async () => (await connectTo(client)).close(), child, "mcp-hub");
        return { child, pid: child.pid, client };
      },
    }),
  ),
  ...(["streamable", "sse"] as const).map(
    (wire): Entry => ({
      name: "mcp-proxy 6.7.19",
      wire,
      era: "2025",
      load: true,
      start: async () => {
        const port = await freePort();
        const child = launch([binOf("mcp-proxy"), "--port", String(port), "--host", "127.0.0.1", "--", process.execPath, misbehavingServerPath]);
        child.stderr?.resume();
        const client: ClientSpec = { kind: "mcp", url: `http://127.0.0.1:${port}/${wire === "sse" ? "sse" : "mcp"}`, wire };
        await ready(async () => (await connectTo(client)).close(), child, "mcp-proxy");
        return { child, pid: child.pid, client };
      },
    }),
  ),
  ...(["streamable", "sse"] as const).map(
    (wire): Entry => ({
      name: "supergateway 4.0.0",
      wire,
      era: "2025",
      load: true,
      start: async () => {
        const port = await freePort();
        const output = wire === "sse" ? ["--outputTransport", "sse"] : ["--outputTransport", "streamableHttp", "--stateful"];
        const child = launch([
          binOf("supergateway"),
          "--stdio",
          `${process.execPath} ${misbehavingServerPath}`,
          ...output,
          "--port",
          String(port),
          "--logLevel",
          "none",
        ]);
        child.stderr?.resume();
        const client: ClientSpec = { kind: "mcp", url: `http://127.0.0.1:${port}/${wire === "sse" ? "sse" : "mcp"}`, wire };
        await ready(async () => (await connectTo(client)).close(), child, "supergateway");
        return { child, pid: child.pid, client };
      },
    }),
  ),
];

interface Block {
  entry: Entry;
  payload: Payload;
  clients: number;
  budget: { calls: number; seconds: number; warmSeconds: number };
  roundNo: number;
}

/**
 * The block's clients, spread over worker threads (`CODEMUX_BENCH_PEERS_CLIENT_THREADS`, default 2): in one event loop, 50
 * SDK clients took a whole core (their CPU a call times the calls/s came to 0.95-1.04 s a second), so the 50-client calls/s
 * measured the bench's own loop more than the gateway. Connected and warmed up first; the loop and the clocks start together.
 */
async function clientThreads(spec: ClientSpec, clients: number, { payload, warmSeconds }: { payload: Payload; warmSeconds: number }) {
  const threads = Math.min(clients, envCount("CODEMUX_BENCH_PEERS_CLIENT_THREADS", 2, { whole: true }));
  const workers = Array.from(
    { length: threads },
    (_, t) =>
      new Worker(new URL("./peers-worker.js", import.meta.url), {
        workerData: { spec, clients: Math.floor(clients / threads) + (t < clients % threads ? 1 : 0), payload, warmSeconds, prefix: `t${t}-` },
      }),
  );
  const next = (worker: Worker) =>
    new Promise<unknown>((resolve, reject) => {
      const fail = (error: unknown) => reject(error instanceof Error ? error : new Error(`a client thread stopped (${String(error)})`));
      worker.once("error", fail);
      worker.once("exit", fail);
      worker.once("message", (message: unknown) => {
        worker.off("error", fail);
        worker.off("exit", fail);
        resolve(message);
      });
    });
  try {
    await Promise.all(workers.map(next));
  } catch (error) {
    await Promise.all(workers.map((w) => w.terminate()));
    throw error;
  }
  return {
    run: async (until: LoopBudget): Promise<LoopResult> => {
      const results = workers.map(next);
      for (const w of workers) w.postMessage(until);
      const done = (await Promise.all(results)) as LoopResult[];
      const firstError = done.find((r) => r.firstError)?.firstError;
      return { times: done.flatMap((r) => r.times), errors: done.reduce((sum, r) => sum + r.errors, 0), ...(firstError ? { firstError } : {}) };
    },
    close: () => Promise.all(workers.map((w) => new Promise((resolve) => (w.threadId === -1 ? resolve(undefined) : w.once("exit", resolve))))),
  };
}

async function measure(started: Started, { entry, payload, clients, budget, roundNo }: Block): Promise<PeerRow> {
  // A client the gateway refuses to connect counts as an error (a session limit binding, say) and takes no part. Warm-up, the
  // same for every gateway: each client calls for `warmSeconds` (at least 5 calls), so the figures are the steady state of a
  // gateway that runs for days (its JIT has compiled the call path), not its first thousand calls.
  // One client stays in this thread, its code compiled by the blocks before (a fresh thread's would be cold at 1,000 calls).
  const loop =
    clients === 1
      ? await closedLoop(started.client, 1, { payload, warmSeconds: budget.warmSeconds })
      : await clientThreads(started.client, clients, { payload, warmSeconds: budget.warmSeconds });
  const load1 = round2(loadavg()[0] ?? 0);
  const cpuStart = cpuSeconds(started.pid);
  const serverRoot = started.pid ?? process.pid;
  const serverCpuStart = treeCpuSeconds(serverRoot);
  const clientCpuStart = process.cpuUsage();
  const t0 = performance.now();
  const { times, errors, firstError } = await loop.run(clients === 1 ? { calls: budget.calls } : { seconds: budget.seconds });
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(started.pid) - cpuStart;
  const serverCpu = treeCpuSeconds(serverRoot) - serverCpuStart;
  const clientCpuUsage = process.cpuUsage(clientCpuStart);
  const perCall = (seconds: number) => (Number.isNaN(seconds) || times.length === 0 ? null : Math.round((seconds / times.length) * 1e6));
  await loop.close();
  return {
    gateway: entry.name,
    wire: entry.wire,
    era: entry.era,
    payload,
    clients,
    round: roundNo,
    calls: times.length,
    errors,
    ...(firstError ? { firstError } : {}),
    callsPerSecond: Math.round(times.length / elapsed),
    p50Ms: round(percentile(times, 50), 3),
    p99Ms: round(percentile(times, 99), 3),
    cpuPerCallUs: perCall(cpu),
    serverCpuPerCallUs: perCall(serverCpu),
    clientCpuPerCallUs: perCall((clientCpuUsage.user + clientCpuUsage.system) / 1e6),
    peakRssMB: peakRssMB(started.pid),
    load1,
  };
}

const round2 = (n: number) => round(n, 2);

/** A count from the environment: a positive number (a whole one with `whole`), else the default (a typo must not run a 0-call block). */
function envCount(name: string, fallback: number, { whole = false }: { whole?: boolean } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value)))
    throw new Error(`${name} must be a positive ${whole ? "whole " : ""}number, not "${raw}"`);
  return value;
}

/**
 * The rounds, budgets and client counts of a run: the defaults (or quick mode's), each overridable for a longer,
 * steadier run: CODEMUX_BENCH_PEERS_ROUNDS, _WARM_SECONDS, _CALLS (one client's), _SECONDS (50 clients'), _CLIENTS ("1", "50" or "1,50").
 */
export function peersBudget(quick: boolean): { rounds: number; budget: Block["budget"]; clientCounts: number[] } {
  const base = quick ? { rounds: 1, calls: 300, seconds: 3, warmSeconds: 1 } : { rounds: 3, calls: 1000, seconds: 10, warmSeconds: 3 };
  const clientCounts = (process.env.CODEMUX_BENCH_PEERS_CLIENTS ?? "1,50").split(",").map((n) => Number(n.trim()));
  if (clientCounts.some((n) => n !== 1 && n !== 50))
    throw new Error(`CODEMUX_BENCH_PEERS_CLIENTS takes 1, 50 or "1,50", not "${process.env.CODEMUX_BENCH_PEERS_CLIENTS}"`);
  return {
    rounds: envCount("CODEMUX_BENCH_PEERS_ROUNDS", base.rounds, { whole: true }),
    budget: {
      calls: envCount("CODEMUX_BENCH_PEERS_CALLS", base.calls, { whole: true }),
      seconds: envCount("CODEMUX_BENCH_PEERS_SECONDS", base.seconds),
      warmSeconds: envCount("CODEMUX_BENCH_PEERS_WARM_SECONDS", base.warmSeconds),
    },
    clientCounts,
  };
}

/** Runs every gateway, `rounds` times interleaved (the order turns each round). */
export async function runPeers(options: { quick?: boolean; only?: string } = {}): Promise<PeersReport> {
  const quick = options.quick ?? false;
  const { rounds, budget, clientCounts } = peersBudget(quick);
  const filters = (options.only ?? "")
    .toLowerCase()
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean);
  const chosen = entries.filter((e) => filters.length === 0 || filters.some((f) => `${e.name} ${e.wire} ${e.era}`.toLowerCase().includes(f)));
  const rows: PeerRow[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = chosen.map((_, i) => chosen[(i + r) % chosen.length] as Entry);
    for (const entry of order) {
      for (const payload of ["echo", "20KB"] as const) {
        for (const clients of (entry.load ? [1, 50] : [1]).filter((n) => clientCounts.includes(n))) {
          // A fresh gateway per block: peak RSS is the block's, and no block inherits another's garbage.
          let started: Started;
          try {
            started = await entry.start();
          } catch (error) {
            process.stdout.write(`  peers r${r + 1} ${entry.name} (${entry.wire}): did not start: ${error instanceof Error ? error.message : String(error)}\n`);
            continue;
          }
          try {
            const row = await measure(started, { entry, payload, clients, budget, roundNo: r + 1 });
            rows.push(row);
            process.stdout.write(
              `  peers r${r + 1} ${entry.name} (${entry.wire}, ${entry.era}) ${payload} x${clients}: ${row.callsPerSecond}/s p50 ${row.p50Ms} ms, ${row.cpuPerCallUs ?? "-"} µs CPU/call (server ${row.serverCpuPerCallUs ?? "-"}, client ${row.clientCpuPerCallUs ?? "-"}), errors ${row.errors}${row.firstError ? ` (${row.firstError})` : ""}, load ${row.load1}\n`,
            );
          } finally {
            started.child.kill("SIGTERM");
            await new Promise((resolve) => (started.child.exitCode !== null ? resolve(undefined) : started.child.once("exit", resolve)));
          }
        }
      }
    }
  }
  return {
    machine: {
      cpu: cpus()[0]?.model ?? "unknown",
      cores: cpus().length,
      memGB: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      date: new Date().toISOString(),
    },
    quick,
    rounds,
    budget,
    rows,
  };
}

const range = (values: number[], digits = 2) => {
  const ok = values.filter((v) => Number.isFinite(v));
  if (ok.length === 0) return "—";
  const lo = round(Math.min(...ok), digits);
  const hi = round(Math.max(...ok), digits);
  return lo === hi ? String(lo) : `${lo}–${hi}`;
};

/** The report as a Markdown table: one line per gateway, wire, era, payload and client count, ranges over the rounds. */
export function peersMarkdown(report: PeersReport): string {
  const groups = new Map<string, PeerRow[]>();
  for (const row of report.rows) {
    const key = `${row.gateway}|${row.wire}|${row.era}|${row.payload}|${row.clients}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const lines = [
    `Machine: ${report.machine.cpu}, ${report.machine.cores} cores, ${report.machine.memGB} GB, Node ${report.machine.node}; ${report.machine.date}; ${report.quick ? "quick mode, " : ""}${report.rounds === 1 ? "1 round" : `${report.rounds} rounds interleaved`}, ${report.budget.calls.toLocaleString("en-US")} calls / ${report.budget.seconds} s after ${report.budget.warmSeconds} s of warm-up calls.`,
    `Load average (1 min) at the start of the blocks: ${range(report.rows.map((r) => r.load1))}.`,
    "",
    "| gateway | wire | downstream era | answer | clients | calls/s | p50 ms | p99 ms | gateway CPU µs/call | server CPU µs/call | client CPU µs/call | peak RSS MB | errors |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const rows of groups.values()) {
    const f = rows[0] as PeerRow;
    lines.push(
      `| ${f.gateway} | ${f.wire} | ${f.era} | ${f.payload} | ${f.clients} | ${range(
        rows.map((r) => r.callsPerSecond),
        0,
      )} | ${range(rows.map((r) => r.p50Ms))} | ${range(rows.map((r) => r.p99Ms))} | ${range(
        rows.map((r) => r.cpuPerCallUs ?? Number.NaN),
        0,
      )} | ${range(
        rows.map((r) => r.serverCpuPerCallUs ?? Number.NaN),
        0,
      )} | ${range(
        rows.map((r) => r.clientCpuPerCallUs ?? Number.NaN),
        0,
      )} | ${range(
        rows.map((r) => r.peakRssMB ?? Number.NaN),
        0,
      )} | ${rows.reduce((a, r) => a + r.errors, 0)} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}

type Table = (title: string, rows: Array<[string, string | number, string?]>) => void;

/**
 * Runs the peers section and prints it; writes its Markdown table to apps/bench/results/peers.md
 * (ignored by git) and, with CODEMUX_BENCH_PEERS_DOC=1, into docs/perf/peers.md between its markers.
 */
export async function reportPeers(table: Table, quick: boolean): Promise<PeersReport> {
  const report = await runPeers({ quick, ...(process.env.CODEMUX_BENCH_PEERS ? { only: process.env.CODEMUX_BENCH_PEERS } : {}) });
  const markdown = peersMarkdown(report);
  table(
    "Peer gateways (same stdio server; ranges over the rounds)",
    report.rows.map((r): [string, string, string] => [
      `${r.gateway} ${r.wire} ${r.era} ${r.payload} x${r.clients} r${r.round}`,
      `${r.callsPerSecond}/s`,
      `p50 ${r.p50Ms} p99 ${r.p99Ms} ms, CPU ${r.cpuPerCallUs ?? "-"} µs/call (server ${r.serverCpuPerCallUs ?? "-"}, client ${r.clientCpuPerCallUs ?? "-"}), RSS ${r.peakRssMB ?? "-"} MB, errors ${r.errors}`,
    ]),
  );
  const out = join(repoRoot(), "apps/bench/results/peers.md");
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, markdown);
  if (process.env.CODEMUX_BENCH_PEERS_DOC === "1") {
    const doc = join(repoRoot(), "docs/perf/peers.md");
    const text = await readFile(doc, "utf8");
    const begin = "<!-- peers:begin -->";
    const end = "<!-- peers:end -->";
    const at = text.indexOf(begin);
    const until = text.indexOf(end);
    if (at < 0 || until < at) throw new Error(`docs/perf/peers.md has no ${begin} ... ${end} markers`);
    await writeFile(doc, `${text.slice(0, at + begin.length)}\n${markdown}${text.slice(until)}`);
  }
  return report;
}
