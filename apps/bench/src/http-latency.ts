import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { textOf } from "./client";
import { cliPath } from "./paths";
import { percentile, round, timed } from "./stats";

export interface OpStats {
  count: number;
  p50Ms: number;
  p99Ms: number;
}

export interface HttpLatencyReport {
  /** One client, echo on the misbehaving server over Streamable HTTP: directly, and through codemux serving HTTP. */
  call: { directP50Ms: number; codemuxP50Ms: number; overheadP50Ms: number; samples: number };
  load: {
    mcpClients: number;
    restClients: number;
    seconds: number;
    ops: Record<string, OpStats>;
    errors: number;
    /** Answers that came back but were not the answer to the question asked. */
    wrongAnswers: number;
    /** execute_code refused because the sandbox queue was full (429 / kind queue_full), then retried as a client would. */
    busyRetries: number;
    firstErrors: string[];
    rssStartMB: number;
    rssPeakMB: number;
  };
  /** Mean time of a refused request with a wrong token of the right length, and of a short one (timing-safe comparison). */
  auth: { sameLengthWrongMs: number; shortWrongMs: number; samples: number };
}

const TOKEN = "bench-token-0123456789abcdef";
const SAMPLES = 200;
/** Calls in a row to one side before switching to the other. */
const BLOCK = 20;
const MCP_CLIENTS = 50;
const REST_CLIENTS = 5;

/** The misbehaving server over Streamable HTTP on a free port. */
async function startDownstream(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [misbehavingServerPath, "--http", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d;
      const match = /listening (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the downstream test server exited (${code})`)));
  });
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

/** `codemux serve --http :0` with one token (or `env`'s) and `args` more; resolves with its base URL. */
export async function startCodemux(
  configFile: string,
  { args = [], env = {} }: { args?: string[]; env?: Record<string, string> } = {},
): Promise<{ child: ChildProcess; url: string }> {
  const home = await mkdtemp(join(tmpdir(), "codemux-bench-home-"));
  const child = spawn(
    process.execPath,
    [cliPath(), "serve", "--http", ":0", "--config", configFile, "--no-watch", "--max-sessions", "200", "--log-level", "warn", ...args],
    {
      env: { ...process.env, CODEMUX_TOKEN: `bench:${TOKEN}`, CODEMUX_HOME: home, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let err = "";
    child.stderr?.on("data", (d: Buffer) => {
      // Request log lines are JSON; only the start line matters here, and memory must not grow with the log.
      if (err.length < 10_000) err += d;
      const match = /serving (http:\/\/\S+)\/mcp/.exec(err);
      if (match) resolve(match[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`codemux serve --http exited (${code}): ${err.slice(0, 2000)}`)));
  });
  return { child, url };
}

function rssMB(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    return round(kb / 1024, 1);
  } catch {
    return Number.NaN;
  }
}

async function mcpClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "codemux-bench-http", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

function stats(samples: number[]): OpStats {
  return { count: samples.length, p50Ms: round(percentile(samples, 50), 2), p99Ms: round(percentile(samples, 99), 2) };
}

/**
 * codemux served over HTTP: the per-call overhead against a direct Streamable HTTP client on the
 * same downstream, then 50 MCP clients and 5 REST clients at once for a bounded time (searches,
 * calls and execute_code), with errors, wrong answers and the server's RSS.
 */
export async function runHttpLatency(options: { seconds?: number } = {}): Promise<HttpLatencyReport> {
  const seconds = options.seconds ?? Number(process.env.CODEMUX_BENCH_HTTP_SECONDS ?? 20);
  const downstream = await startDownstream();
  const dir = await mkdtemp(join(tmpdir(), "codemux-bench-http-"));
  const configFile = join(dir, "codemux.json");
  // One address and one token stand for 55 clients here: the gateway's per-address and per-principal shares are raised to fit them.
  const http = { limits: { connectionsPerAddress: 256, perPrincipal: { sessions: 200 } } };
  await writeFile(configFile, JSON.stringify({ mcpServers: { m: { type: "http", url: downstream.url } }, http }));
  const codemux = await startCodemux(configFile);
  const auth = { authorization: `Bearer ${TOKEN}` };
  try {
    const { directMs, viaMs } = await callOverhead(downstream.url, `${codemux.url}/mcp`, auth);
    // Timing of refusals (loose: the protection is hashing before comparing, this only shows no gross difference).
    const sameLengthWrongMs = await refusalMs(codemux.url, `${TOKEN.slice(0, -1)}x`);
    const shortWrongMs = await refusalMs(codemux.url, "x");
    const load = await runLoad(codemux, auth, seconds);
    const directP50 = percentile(directMs, 50);
    const viaP50 = percentile(viaMs, 50);
    return {
      call: { directP50Ms: round(directP50, 3), codemuxP50Ms: round(viaP50, 3), overheadP50Ms: round(viaP50 - directP50, 3), samples: SAMPLES },
      load,
      auth: { sameLengthWrongMs: round(sameLengthWrongMs, 3), shortWrongMs: round(shortWrongMs, 3), samples: 500 },
    };
  } finally {
    codemux.child.kill("SIGTERM");
    downstream.child.kill("SIGTERM");
  }
}

/** Overhead of one call: direct and through codemux in alternating blocks, so load from elsewhere on the machine falls on both alike. */
async function callOverhead(directUrl: string, viaUrl: string, auth: Record<string, string>): Promise<{ directMs: number[]; viaMs: number[] }> {
  const direct = await mcpClient(directUrl);
  const via = await mcpClient(viaUrl, auth);
  const callDirect = () => direct.callTool({ name: "echo", arguments: { text: "ping" } });
  const callVia = () => via.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } });
  for (let i = 0; i < 20; i++) {
    await callDirect();
    await callVia();
  }
  const directMs: number[] = [];
  const viaMs: number[] = [];
  for (let block = 0; directMs.length < SAMPLES; block++) {
    const order: Array<[() => Promise<unknown>, number[]]> = [
      [callDirect, directMs],
      [callVia, viaMs],
    ];
    for (const [call, into] of block % 2 === 0 ? order : order.reverse()) {
      for (let i = 0; i < BLOCK; i++) into.push((await timed(call))[0]);
    }
  }
  await direct.close();
  await via.close();
  return { directMs, viaMs };
}

/** Mean time of 500 requests refused for `token`. */
async function refusalMs(url: string, token: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 500; i++)
    times.push((await timed(() => fetch(`${url}/v1/tools`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.arrayBuffer())))[0]);
  return times.reduce((a, b) => a + b, 0) / times.length;
}

/** What the load keeps count of: each operation's times, errors (the first few said), wrong answers and retries of a busy sandbox. */
class LoadTally {
  readonly samples: Record<string, number[]> = { search: [], call: [], exec: [], restSearch: [], restCall: [], restExec: [] };
  errors = 0;
  wrongAnswers = 0;
  busyRetries = 0;
  readonly firstErrors: string[] = [];

  /** Times one operation; `fn` says whether its answer was the right one. */
  async record(op: string, fn: () => Promise<boolean>): Promise<void> {
    try {
      const [ms, right] = await timed(fn);
      this.samples[op]?.push(ms);
      if (!right) this.wrongAnswers++;
    } catch (error) {
      this.errors++;
      if (this.firstErrors.length < 5) this.firstErrors.push(error instanceof Error ? error.message.slice(0, 300) : String(error));
    }
  }

  /** Retries a snippet the sandbox refused as busy, as a well-behaved client does (bounded). */
  async retryBusy<T>(run: () => Promise<T | "busy">): Promise<T> {
    for (let attempt = 0; attempt < 40; attempt++) {
      const out = await run();
      if (out !== "busy") return out;
      this.busyRetries++;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error("the sandbox stayed busy for 10 s");
  }
}

/** 50 MCP clients and 5 REST clients at once until `seconds` pass, with the server's RSS sampled meanwhile. */
async function runLoad(codemux: { url: string; child: ChildProcess }, auth: Record<string, string>, seconds: number): Promise<HttpLatencyReport["load"]> {
  const rssStartMB = rssMB(codemux.child.pid);
  let rssPeakMB = rssStartMB;
  const rssTimer = setInterval(() => {
    rssPeakMB = Math.max(rssPeakMB, rssMB(codemux.child.pid));
  }, 250);
  const tally = new LoadTally();
  const clients = await Promise.all(Array.from({ length: MCP_CLIENTS }, () => mcpClient(`${codemux.url}/mcp`, auth)));
  const deadline = Date.now() + seconds * 1000;
  await Promise.all([
    ...clients.map((client, n) => mcpLoop(client, { n, deadline, tally })),
    ...Array.from({ length: REST_CLIENTS }, (_, n) => restLoop({ url: codemux.url, auth }, { n, deadline, tally })),
  ]);
  clearInterval(rssTimer);
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  const { samples, errors, wrongAnswers, busyRetries, firstErrors } = tally;
  return {
    mcpClients: MCP_CLIENTS,
    restClients: REST_CLIENTS,
    seconds,
    ops: Object.fromEntries(Object.entries(samples).map(([op, s]) => [op, stats(s)])),
    errors,
    wrongAnswers,
    busyRetries,
    firstErrors,
    rssStartMB,
    rssPeakMB,
  };
}

/** One MCP client's loop: a search and a call each round, and a snippet every third. */
async function mcpLoop(client: Client, { n, deadline, tally }: { n: number; deadline: number; tally: LoadTally }): Promise<void> {
  for (let i = 0; Date.now() < deadline; i++) {
    const tag = `c${n}-${i}`;
    await tally.record("search", async () =>
      textOf(await client.callTool({ name: "search_tools", arguments: { query: "echo text back", limit: 3 } })).includes("m__echo"),
    );
    await tally.record("call", async () => textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: tag } } })) === tag);
    if (i % 3 !== 0) continue;
    await tally.record("exec", async () => {
      const body = await tally.retryBusy(async () => {
        const out = JSON.parse(
          textOf(
            await client.callTool({
              name: "execute_code",
              arguments: { code: `import { echo } from "mcp/servers/m/echo";\nexport default await echo({ text: "${tag}" });` },
            }),
          ),
        ) as { result?: unknown; error?: { kind?: string; message?: string } };
        if (out.error?.kind === "queue_full") return "busy";
        if (out.error) throw new Error(`execute_code failed: ${out.error.message}`);
        return out;
      });
      return body.result === tag;
    });
  }
}

/** One REST client's loop: a search and a call each round, and a snippet every third. */
async function restLoop(
  { url, auth }: { url: string; auth: Record<string, string> },
  { n, deadline, tally }: { n: number; deadline: number; tally: LoadTally },
): Promise<void> {
  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });
  for (let i = 0; Date.now() < deadline; i++) {
    const tag = `r${n}-${i}`;
    await tally.record("restSearch", async () => {
      const res = await fetch(`${url}/v1/tools?q=echo%20text%20back&limit=3`, { headers: auth });
      if (!res.ok) throw new Error(`GET /v1/tools answered ${res.status}`);
      return ((await res.json()) as { tools: Array<{ name: string }> }).tools.some((t) => t.name === "m__echo");
    });
    await tally.record("restCall", async () => {
      const res = await post("/v1/tools/m__echo/call", { text: tag });
      if (!res.ok) throw new Error(`POST /v1/tools/m__echo/call answered ${res.status}`);
      return ((await res.json()) as { value: unknown }).value === tag;
    });
    if (i % 3 !== 0) continue;
    await tally.record("restExec", async () => {
      const body = await tally.retryBusy(async () => {
        const res = await post("/v1/exec", { code: `import { echo } from "mcp/servers/m/echo";\nexport default await echo({ text: "${tag}" });` });
        if (res.status === 429) return (await res.arrayBuffer(), "busy" as const);
        if (!res.ok) throw new Error(`POST /v1/exec answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
        return (await res.json()) as { result: unknown };
      });
      return body.result === tag;
    });
  }
}

type Table = (title: string, rows: Array<[string, string | number, string?]>) => void;

/** Runs the HTTP benchmark and prints its tables with the bench's own table printer. */
export async function reportHttpLatency(table: Table): Promise<HttpLatencyReport> {
  const r = await runHttpLatency();
  table(`Over HTTP (Streamable HTTP, ${r.call.samples} calls, echo on a local HTTP server)`, [
    ["direct client p50", `${r.call.directP50Ms} ms`],
    ["through codemux --http call_tool p50", `${r.call.codemuxP50Ms} ms`, `+${r.call.overheadP50Ms} ms`],
    ["401 wrong token (same length / short), mean", `${r.auth.sameLengthWrongMs} / ${r.auth.shortWrongMs} ms`],
  ]);
  table(`Load: ${r.load.mcpClients} MCP + ${r.load.restClients} REST clients for ${r.load.seconds} s`, [
    ...Object.entries(r.load.ops).map(([op, s]): [string, string, string] => [op, `${s.p50Ms} ms`, `p99 ${s.p99Ms} ms, ${s.count} done`]),
    ["errors / wrong answers", `${r.load.errors} / ${r.load.wrongAnswers}`, r.load.firstErrors[0] ?? ""],
    ["execute_code retried after 'sandbox busy'", r.load.busyRetries, "the sandbox queue (2 workers + 50 waiting here) sheds load with 429 / queue_full"],
    ["server RSS start / peak", `${r.load.rssStartMB} / ${r.load.rssPeakMB} MB`],
  ]);
  return r;
}
