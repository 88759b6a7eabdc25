import type { ToolCallMiddleware } from "@codemux/core";
import { parseConfig } from "@codemux/pool";
import { Sandbox } from "@codemux/sandbox";
import { Codemux, createSessionServer } from "@codemux/server";
import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { connectCodemux, connectCommand, textOf } from "./client";
import { cliPath } from "./paths";
import { percentile, round, timed } from "./stats";

/** Each hop of a proxied call measured on its own, in process (p50, microseconds, warmed). */
export interface HopReport {
  /** The pool's SDK client to the downstream server over stdio and back: one stdio round trip. */
  poolCallUs: number;
  /** The code surface's call_tool (resolution, middleware, validation, result limits) around that. */
  surfaceCallToolUs: number;
  /** An SDK client to codemux's SDK server over an in-memory pair (no stdio) around that. */
  inMemoryCallToolUs: number;
  /** Inside one 20-call snippet: a call in the pipeline (host side), the gap between two calls (host -> worker -> QuickJS -> worker -> host), and the snippet's start before its first call (bundle, fresh QuickJS, modules). */
  chainCallInPipelineUs: number;
  chainGapBetweenCallsUs: number;
  chainStartToFirstCallUs: number;
  /** Sandbox.execute alone with an echo host: trivial snippet, and per host call of a 100-call sequential loop. */
  sandboxTrivialUs: number;
  sandboxPerSequentialHostCallUs: number;
}

export interface LatencyReport {
  hops: HopReport | null;
  call: {
    directP50Ms: number;
    directP99Ms: number;
    codemuxP50Ms: number;
    codemuxP99Ms: number;
    /** codemux call_tool p50 over a direct SDK client's p50, measured interleaved in the same run. */
    ratioP50: number;
    /** A plain SDK Server-to-Client proxy (no codemux) on the same server: the floor any SDK proxy pays. */
    plainProxyP50Ms: number;
    plainProxyRatioP50: number;
    /** The same two, alternating, each call after 5 ms of idle (as a model calls tools, seconds apart): no process is hot. */
    spacedDirectP50Ms: number;
    spacedCodemuxP50Ms: number;
    spacedRatioP50: number;
    samples: number;
    warmupCalls: number;
  };
  execute: {
    trivialP50Ms: number;
    trivialP99Ms: number;
    /** 20 dependent calls in one execute_code, against 20 call_tool round trips (medians, interleaved). */
    chain20InOneSnippetMs: number;
    chain20AsCallToolMs: number;
    chainRatio: number;
    /** 100 calls awaited with Promise.all in one snippet, against 100 concurrent calls of a direct client. */
    parallel100Ms: number;
    directParallel100Ms: number;
    parallelCallsPerSecond: number;
    directParallelCallsPerSecond: number;
    /** Snippet rate over direct rate (the target is at least 0.8). */
    parallelRateRatio: number;
    /** Ten 400 ms calls awaited together. */
    ten400msCallsMs: number;
    samples: number;
  };
}

/** V8 keeps optimizing the hot path for the first few thousand calls: measuring before that measures warm-up. */
const WARMUP_CALLS = Number(process.env.CODEMUX_BENCH_WARMUP ?? 3000);
const ROUNDS = 10;
const SPACED_CALLS = 300;
const SPACED_GAP_MS = 5;
const CALLS_PER_ROUND = 200;
const SNIPPET_ROUNDS = 40;

const log = (line: string) => process.stdout.write(`${line}\n`);

/** A proxy made of nothing but the SDK: a Server whose handlers forward to a Client, as a plain SDK proxy would. */
function plainProxySource(): string {
  const sdk = (path: string) => JSON.stringify(import.meta.resolve(`@modelcontextprotocol/sdk/${path}`));
  return `
import { Server } from ${sdk("server/index.js")};
import { StdioServerTransport } from ${sdk("server/stdio.js")};
import { Client } from ${sdk("client/index.js")};
import { StdioClientTransport } from ${sdk("client/stdio.js")};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${sdk("types.js")};
const client = new Client({ name: "plain-proxy", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(misbehavingServerPath)}], stderr: "inherit" }));
const server = new Server({ name: "plain-proxy", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => client.listTools());
server.setRequestHandler(CallToolRequestSchema, (request, extra) => client.callTool(request.params, undefined, { signal: extra.signal }));
const transport = new StdioServerTransport();
transport.onclose = () => void client.close().then(() => process.exit(0));
process.stdin.on("end", () => void client.close().then(() => process.exit(0)));
await server.connect(transport);
`;
}

async function warm(fn: () => Promise<unknown>, times: number): Promise<void> {
  for (let i = 0; i < times; i++) await fn();
}

/** Samples each contender in turn, round after round, so that a noisy neighbour on the machine hits all of them alike. */
async function interleaved(contenders: Array<() => Promise<unknown>>, rounds: number, perRound: number): Promise<number[][]> {
  const out = contenders.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const index = (k + r) % contenders.length;
      const fn = contenders[index]!;
      for (let i = 0; i < perRound; i++) out[index]!.push((await timed(fn))[0]);
    }
  }
  return out;
}

/** Each contender in turn, every call after `gapMs` of idle. */
async function spaced(contenders: Array<() => Promise<unknown>>, calls: number, gapMs: number): Promise<number[][]> {
  const out = contenders.map(() => [] as number[]);
  for (let i = 0; i < calls; i++) {
    for (let k = 0; k < contenders.length; k++) {
      await sleep(gapMs);
      out[k]!.push((await timed(contenders[k]!))[0]);
    }
  }
  return out;
}

async function execute(client: Client, code: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  const [ms, result] = await timed(() => client.callTool({ name: "execute_code", arguments: { code } }));
  if (result.isError) throw new Error(`execute_code failed in the benchmark: ${textOf(result)}`);
  return { ms, body: JSON.parse(textOf(result)) as Record<string, unknown> };
}

const CHAIN_CODE = `
import { echo } from "mcp/servers/m/echo";
let text = "0";
for (let i = 0; i < 20; i++) text = String(await echo({ text: String(Number(text) + 1) }));
export default text;`;

const PARALLEL_CODE = `
import { echo } from "mcp/servers/m/echo";
export default (await Promise.all(Array.from({ length: 100 }, (_, i) => echo({ text: String(i) })))).length;`;

const NO_CALL: LatencyReport["call"] = {
  directP50Ms: NaN,
  directP99Ms: NaN,
  codemuxP50Ms: NaN,
  codemuxP99Ms: NaN,
  ratioP50: NaN,
  plainProxyP50Ms: NaN,
  plainProxyRatioP50: NaN,
  spacedDirectP50Ms: NaN,
  spacedCodemuxP50Ms: NaN,
  spacedRatioP50: NaN,
  samples: 0,
  warmupCalls: WARMUP_CALLS,
};

const NO_EXECUTE: LatencyReport["execute"] = {
  trivialP50Ms: NaN,
  trivialP99Ms: NaN,
  chain20InOneSnippetMs: NaN,
  chain20AsCallToolMs: NaN,
  chainRatio: NaN,
  parallel100Ms: NaN,
  directParallel100Ms: NaN,
  parallelCallsPerSecond: NaN,
  directParallelCallsPerSecond: NaN,
  parallelRateRatio: NaN,
  ten400msCallsMs: NaN,
  samples: 0,
};

/** The clients measured: the server directly, through a plain SDK proxy, through codemux, and through a baseline build of codemux when one is named. */
interface Contenders {
  direct: Client;
  plain: Client;
  client: Client;
  baseline: Client | undefined;
}

async function startContenders(dir: string, configFile: string): Promise<Contenders> {
  const proxyFile = join(dir, "plain-proxy.mjs");
  await writeFile(proxyFile, plainProxySource());
  const profileDir = process.env.CODEMUX_BENCH_PROFILE_DIR;
  const direct = await connectCommand(process.execPath, [misbehavingServerPath]);
  const plain = await connectCommand(process.execPath, [proxyFile]);
  // Node refuses --cpu-prof in NODE_OPTIONS: the profiled codemux is started with it on its command line.
  const nodeArgs = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const codemuxAt = (cli: string) => connectCommand(process.execPath, [...nodeArgs, cli, "--config", configFile, "--log-level", "error"]);
  const client =
    process.env.CODEMUX_BENCH_CLI || profileDir ? await codemuxAt(process.env.CODEMUX_BENCH_CLI || cliPath()) : await connectCodemux(["--config", configFile]);
  // A before/after comparison in one run: another build of the CLI measured interleaved with this one.
  const baselineCli = process.env.CODEMUX_BENCH_BASELINE_CLI;
  const baseline = baselineCli ? await connectCommand(process.execPath, [baselineCli, "--config", configFile, "--log-level", "error"]) : undefined;
  return { direct, plain, client, baseline };
}

/**
 * Call latency through codemux against a direct client and a plain SDK proxy on the same server, and
 * execute_code latencies, all over stdio, warmed, each contender interleaved with its baseline.
 * `CODEMUX_BENCH_PROFILE_DIR` runs codemux under `node --cpu-prof` and writes its profiles there.
 */
export async function runLatency(): Promise<LatencyReport> {
  const dir = await mkdtemp(join(tmpdir(), "codemux-latency-"));
  const configFile = join(dir, "codemux.json");
  await writeFile(configFile, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }));
  const contenders = await startContenders(dir, configFile);
  const { direct, plain, client, baseline } = contenders;
  try {
    // CODEMUX_BENCH_LATENCY=call measures only the call_tool rows.
    const only = process.env.CODEMUX_BENCH_LATENCY;
    const call = !only || only === "call" ? await measureCalls(contenders) : NO_CALL;
    if (only === "call") return { call, hops: null, execute: NO_EXECUTE };
    const execute_ = await measureSnippets(contenders);
    const hops = await runHops();
    log(
      `  hops (in process, p50 us): pool call ${hops.poolCallUs}; surface call_tool ${hops.surfaceCallToolUs}; SDK client over in-memory ${hops.inMemoryCallToolUs}; in a chain: call ${hops.chainCallInPipelineUs}, gap between calls ${hops.chainGapBetweenCallsUs}, start to first call ${hops.chainStartToFirstCallUs}; sandbox alone: trivial ${hops.sandboxTrivialUs}, per host call ${hops.sandboxPerSequentialHostCallUs}`,
    );
    return { call, execute: execute_, hops };
  } finally {
    await Promise.all([client.close(), plain.close(), direct.close(), baseline?.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}

/** call_tool through codemux against the direct client and the plain proxy: interleaved, then spaced by idle gaps. */
async function measureCalls({ direct, plain, client, baseline }: Contenders): Promise<LatencyReport["call"]> {
  const directCall = () => direct.callTool({ name: "echo", arguments: { text: "ping" } });
  const plainCall = () => plain.callTool({ name: "echo", arguments: { text: "ping" } });
  const viaCall = () => client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } });
  const baseCall = baseline ? () => baseline.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } }) : undefined;
  const contenders = [directCall, plainCall, viaCall, ...(baseCall ? [baseCall] : [])];
  for (const fn of contenders) await warm(fn, WARMUP_CALLS);
  const [d, p, v, b] = await interleaved(contenders, ROUNDS, CALLS_PER_ROUND);
  if (b)
    log(
      `  before/after (call_tool p50, interleaved): baseline build ${round(percentile(b, 50), 3)} ms = x${round(percentile(b, 50) / percentile(d!, 50))} direct; this build ${round(percentile(v!, 50), 3)} ms = x${round(percentile(v!, 50) / percentile(d!, 50))} direct`,
    );
  const p50 = (s: number[] | undefined) => percentile(s!, 50);
  const [sd, sv] = await spaced([directCall, viaCall], SPACED_CALLS, SPACED_GAP_MS);
  const call = {
    directP50Ms: round(p50(d), 3),
    directP99Ms: round(percentile(d!, 99), 3),
    codemuxP50Ms: round(p50(v), 3),
    codemuxP99Ms: round(percentile(v!, 99), 3),
    ratioP50: round(p50(v) / p50(d)),
    plainProxyP50Ms: round(p50(p), 3),
    plainProxyRatioP50: round(p50(p) / p50(d)),
    spacedDirectP50Ms: round(p50(sd), 3),
    spacedCodemuxP50Ms: round(p50(sv), 3),
    spacedRatioP50: round(p50(sv) / p50(sd)),
    samples: ROUNDS * CALLS_PER_ROUND,
    warmupCalls: WARMUP_CALLS,
  };
  log(
    `  ratios (call, interleaved, warmed by ${WARMUP_CALLS} calls): codemux/direct x${call.ratioP50}, plain SDK proxy/direct x${call.plainProxyRatioP50}, codemux/plain proxy x${round(p50(v) / p50(p))}`,
  );
  return call;
}

/** execute_code: a trivial snippet, a 20-call chain in one snippet against 20 round trips, 100 calls in parallel against the direct client, ten slow calls at once. */
async function measureSnippets({ direct, client, baseline }: Contenders): Promise<LatencyReport["execute"]> {
  const chain = await execute(client, CHAIN_CODE);
  if (chain.body.result !== "20") throw new Error(`chain returned ${JSON.stringify(chain.body)}`);
  const trivial = () => execute(client, "export default 1 + 1");
  const chainInSnippet = () => execute(client, CHAIN_CODE);
  const chainAsRoundTrips = async () => {
    let text = "0";
    for (let i = 0; i < 20; i++)
      text = textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: String(Number(text) + 1) } } }));
  };
  const parallelInSnippet = () => execute(client, PARALLEL_CODE);
  const directParallel = () => Promise.all(Array.from({ length: 100 }, (_, i) => direct.callTool({ name: "echo", arguments: { text: String(i) } })));

  await warm(trivial, Math.ceil(WARMUP_CALLS / 3));
  await warm(chainInSnippet, Math.ceil(WARMUP_CALLS / 30));
  await warm(chainAsRoundTrips, Math.ceil(WARMUP_CALLS / 60));
  await warm(parallelInSnippet, Math.ceil(WARMUP_CALLS / 100));
  await warm(directParallel, Math.ceil(WARMUP_CALLS / 100));
  if (baseline) await compareSnippets(baseline, { trivial, chainInSnippet, parallelInSnippet });
  const [t] = await interleaved([trivial], ROUNDS, 30);
  const [cs, cr] = await interleaved([chainInSnippet, chainAsRoundTrips], SNIPPET_ROUNDS, 1);
  const [ps, pd] = await interleaved([parallelInSnippet, directParallel], SNIPPET_ROUNDS, 1);
  const slow = await execute(
    client,
    `
      import { slow } from "mcp/servers/m/slow";
      await Promise.all(Array.from({ length: 10 }, () => slow({ ms: 400, steps: 1 })));
      export default "done";`,
  );

  const med = (s: number[] | undefined) => percentile(s!, 50);
  const execute_: LatencyReport["execute"] = {
    trivialP50Ms: round(med(t), 3),
    trivialP99Ms: round(percentile(t!, 99), 3),
    chain20InOneSnippetMs: round(med(cs)),
    chain20AsCallToolMs: round(med(cr)),
    chainRatio: round(med(cs) / med(cr)),
    parallel100Ms: round(med(ps)),
    directParallel100Ms: round(med(pd)),
    parallelCallsPerSecond: Math.round(100_000 / med(ps)),
    directParallelCallsPerSecond: Math.round(100_000 / med(pd)),
    parallelRateRatio: round(med(pd) / med(ps)),
    ten400msCallsMs: round(slow.ms),
    samples: ROUNDS * 30,
  };
  log(
    `  ratios (snippets, interleaved): 20-call chain/20 round trips x${execute_.chainRatio}; 100 parallel in a snippet ${execute_.parallelCallsPerSecond}/s vs direct ${execute_.directParallelCallsPerSecond}/s = ${execute_.parallelRateRatio} of the direct rate; trivial execute_code p50 ${execute_.trivialP50Ms} ms`,
  );
  return execute_;
}

/** The same snippets on a baseline build, interleaved with this one's, logged as before -> after. */
async function compareSnippets(
  baseline: Client,
  after: { trivial: () => Promise<unknown>; chainInSnippet: () => Promise<unknown>; parallelInSnippet: () => Promise<unknown> },
): Promise<void> {
  const baseTrivial = () => execute(baseline, "export default 1 + 1");
  const baseChain = () => execute(baseline, CHAIN_CODE);
  const baseParallel = () => execute(baseline, PARALLEL_CODE);
  for (const fn of [baseTrivial, baseChain, baseParallel]) await warm(fn, 100);
  const [tb, ta] = await interleaved([baseTrivial, after.trivial], ROUNDS, 30);
  const [cb, ca] = await interleaved([baseChain, after.chainInSnippet], ROUNDS, 3);
  const [pb, pa] = await interleaved([baseParallel, after.parallelInSnippet], ROUNDS, 3);
  const pair = (label: string, before: number[] | undefined, now: number[] | undefined) =>
    `${label} ${round(percentile(before!, 50), 3)} -> ${round(percentile(now!, 50), 3)} ms`;
  log(`  before/after (p50, interleaved): ${pair("trivial", tb, ta)}; ${pair("20-call chain", cb, ca)}; ${pair("100 parallel", pb, pa)}`);
}

const median = (samples: number[]) => round(percentile(samples, 50) * 1000, 1);

async function sampleUs(fn: () => Promise<unknown>, warmup: number, n: number): Promise<number> {
  await warm(fn, warmup);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await timed(fn))[0]);
  return median(out);
}

/** The hops of a call measured one by one in this process: the pool, the surface, the SDK server, and a snippet's crossings. */
export async function runHops(): Promise<HopReport> {
  const marks: Array<[number, number]> = [];
  const mark: ToolCallMiddleware = async (ctx, next) => {
    const start = performance.now();
    const result = await next(ctx);
    marks.push([start, performance.now()]);
    return result;
  };
  const config = parseConfig(JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }), {
    file: "bench",
    env: process.env,
  });
  const core = new Codemux({ config, middleware: [mark] });
  core.start();
  await core.ready();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const client = new Client({ name: "codemux-bench", version: "1.0.0" });
  await client.connect(clientSide);
  const sandbox = new Sandbox();
  const echo = async (_name: string, args: unknown) => args;
  try {
    const surface = core.surface();
    const session = core.session();
    const context = { core, session, origin: "call_tool", signal: new AbortController().signal, requestId: "bench" };
    const poolCallUs = await sampleUs(() => core.pool.callTool("m", "echo", { text: "ping" }), WARMUP_CALLS, 2000);
    const surfaceCallToolUs = await sampleUs(() => surface.callTool("call_tool", { name: "m__echo", args: { text: "ping" } }, context), WARMUP_CALLS, 2000);
    const inMemoryCallToolUs = await sampleUs(
      () => client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } }),
      WARMUP_CALLS,
      2000,
    );

    const runChain = () => surface.callTool("execute_code", { code: CHAIN_CODE }, context);
    await warm(runChain, 50);
    const inCall: number[] = [];
    const gaps: number[] = [];
    const heads: number[] = [];
    for (let i = 0; i < 50; i++) {
      marks.length = 0;
      const started = performance.now();
      await runChain();
      if (marks.length !== 20) throw new Error(`The benchmark chain made ${marks.length} calls instead of 20.`);
      heads.push(marks[0]![0] - started);
      marks.forEach(([start, end], k) => {
        inCall.push(end - start);
        if (k > 0) gaps.push(start - marks[k - 1]![1]);
      });
    }
    const sandboxTrivialUs = await sampleUs(() => sandbox.execute({ code: "export default 1 + 1;", onCall: echo }), 300, 300);
    const sequentialUs = await sampleUs(
      () =>
        sandbox.execute({ code: "let s = 0;\nfor (let i = 0; i < 100; i++) s += (await __host_call('echo', i)) as number;\nexport default s;", onCall: echo }),
      30,
      30,
    );
    return {
      poolCallUs,
      surfaceCallToolUs,
      inMemoryCallToolUs,
      chainCallInPipelineUs: median(inCall),
      chainGapBetweenCallsUs: median(gaps),
      chainStartToFirstCallUs: median(heads),
      sandboxTrivialUs,
      sandboxPerSequentialHostCallUs: round((sequentialUs - sandboxTrivialUs) / 100, 1),
    };
  } finally {
    await sandbox.close();
    await client.close();
    await core.close();
  }
}
