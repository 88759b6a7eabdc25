import { misbehavingServerPath } from "@codemux/test-servers";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectCodemux, connectCommand, textOf } from "./client";
import { percentile, round, timed } from "./stats";

export interface LatencyReport {
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

/**
 * Call latency through codemux against a direct client and a plain SDK proxy on the same server, and
 * execute_code latencies, all over stdio, warmed, each contender interleaved with its baseline.
 * `CODEMUX_BENCH_PROFILE_DIR` runs codemux under `node --cpu-prof` and writes its profiles there.
 */
export async function runLatency(): Promise<LatencyReport> {
  const dir = await mkdtemp(join(tmpdir(), "codemux-latency-"));
  const configFile = join(dir, "codemux.json");
  await writeFile(configFile, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }));
  const proxyFile = join(dir, "plain-proxy.mjs");
  await writeFile(proxyFile, plainProxySource());
  const profileDir = process.env.CODEMUX_BENCH_PROFILE_DIR;
  const direct = await connectCommand(process.execPath, [misbehavingServerPath]);
  const plain = await connectCommand(process.execPath, [proxyFile]);
  const client = await connectCodemux(["--config", configFile], profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {});
  try {
    const directCall = () => direct.callTool({ name: "echo", arguments: { text: "ping" } });
    const plainCall = () => plain.callTool({ name: "echo", arguments: { text: "ping" } });
    const viaCall = () => client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } });
    const only = process.env.CODEMUX_BENCH_ONLY;

    let call: LatencyReport["call"] = { directP50Ms: NaN, directP99Ms: NaN, codemuxP50Ms: NaN, codemuxP99Ms: NaN, ratioP50: NaN, plainProxyP50Ms: NaN, plainProxyRatioP50: NaN, samples: 0, warmupCalls: WARMUP_CALLS };
    if (!only || only === "call") {
      for (const fn of [directCall, plainCall, viaCall]) await warm(fn, WARMUP_CALLS);
      const [d, p, v] = await interleaved([directCall, plainCall, viaCall], ROUNDS, CALLS_PER_ROUND);
      const p50 = (s: number[] | undefined) => percentile(s!, 50);
      call = {
        directP50Ms: round(p50(d), 3),
        directP99Ms: round(percentile(d!, 99), 3),
        codemuxP50Ms: round(p50(v), 3),
        codemuxP99Ms: round(percentile(v!, 99), 3),
        ratioP50: round(p50(v) / p50(d)),
        plainProxyP50Ms: round(p50(p), 3),
        plainProxyRatioP50: round(p50(p) / p50(d)),
        samples: ROUNDS * CALLS_PER_ROUND,
        warmupCalls: WARMUP_CALLS,
      };
      log(`  ratios (call, interleaved, warmed by ${WARMUP_CALLS} calls): codemux/direct x${call.ratioP50}, plain SDK proxy/direct x${call.plainProxyRatioP50}, codemux/plain proxy x${round(p50(v) / p50(p))}`);
    }

    const chain = await execute(client, CHAIN_CODE);
    if (chain.body.result !== "20") throw new Error(`chain returned ${JSON.stringify(chain.body)}`);
    const trivial = () => execute(client, "export default 1 + 1");
    const chainInSnippet = () => execute(client, CHAIN_CODE);
    const chainAsRoundTrips = async () => {
      let text = "0";
      for (let i = 0; i < 20; i++) text = textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: String(Number(text) + 1) } } }));
    };
    const parallelInSnippet = () => execute(client, PARALLEL_CODE);
    const directParallel = () => Promise.all(Array.from({ length: 100 }, (_, i) => direct.callTool({ name: "echo", arguments: { text: String(i) } })));

    await warm(trivial, Math.ceil(WARMUP_CALLS / 3));
    await warm(chainInSnippet, Math.ceil(WARMUP_CALLS / 30));
    await warm(chainAsRoundTrips, Math.ceil(WARMUP_CALLS / 60));
    await warm(parallelInSnippet, Math.ceil(WARMUP_CALLS / 100));
    await warm(directParallel, Math.ceil(WARMUP_CALLS / 100));
    const [t] = await interleaved([trivial], ROUNDS, 30);
    const [cs, cr] = await interleaved([chainInSnippet, chainAsRoundTrips], SNIPPET_ROUNDS, 1);
    const [ps, pd] = await interleaved([parallelInSnippet, directParallel], SNIPPET_ROUNDS, 1);
    const slow = await execute(client, `
      import { slow } from "mcp/servers/m/slow";
      await Promise.all(Array.from({ length: 10 }, () => slow({ ms: 400, steps: 1 })));
      export default "done";`);

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
    log(`  ratios (snippets, interleaved): 20-call chain/20 round trips x${execute_.chainRatio}; 100 parallel in a snippet ${execute_.parallelCallsPerSecond}/s vs direct ${execute_.directParallelCallsPerSecond}/s = ${execute_.parallelRateRatio} of the direct rate; trivial execute_code p50 ${execute_.trivialP50Ms} ms`);
    return { call, execute: execute_ };
  } finally {
    await Promise.all([client.close(), plain.close(), direct.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}
