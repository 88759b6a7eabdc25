import { misbehavingServerPath } from "@codemux/test-servers";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectCodemux, connectCommand, textOf } from "./client";
import { percentile, round, timed } from "./stats";

export interface LatencyReport {
  call: { directP50Ms: number; directP99Ms: number; codemuxP50Ms: number; codemuxP99Ms: number; ratioP50: number; samples: number };
  execute: {
    trivialP50Ms: number;
    trivialP99Ms: number;
    /** 20 dependent calls in one execute_code, against 20 call_tool round trips (medians of 10 runs). */
    chain20InOneSnippetMs: number;
    chain20AsCallToolMs: number;
    /** 100 calls awaited with Promise.all in one snippet. */
    parallel100Ms: number;
    /** Ten 400 ms calls awaited together. */
    ten400msCallsMs: number;
    samples: number;
  };
}

const SAMPLES = 300;

async function sample(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 20; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await timed(fn))[0]);
  return out;
}

const REPEATS = 10;

/** The median time of `REPEATS` runs of `fn` (after one warm-up run). */
async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < REPEATS; i++) times.push((await timed(fn))[0]);
  return percentile(times, 50);
}

async function execute(client: Client, code: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  const [ms, result] = await timed(() => client.callTool({ name: "execute_code", arguments: { code } }));
  const body = JSON.parse(textOf(result)) as Record<string, unknown>;
  if (result.isError) throw new Error(`execute_code failed in the benchmark: ${textOf(result)}`);
  return { ms, body };
}

/** Call latency through codemux against a direct client on the same server, and execute_code latencies, all over stdio. */
export async function runLatency(): Promise<LatencyReport> {
  const direct = await connectCommand(process.execPath, [misbehavingServerPath]);
  const directMs = await sample(SAMPLES, () => direct.callTool({ name: "echo", arguments: { text: "ping" } }));
  await direct.close();

  const dir = await mkdtemp(join(tmpdir(), "codemux-latency-"));
  const configFile = join(dir, "codemux.json");
  await writeFile(configFile, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }));
  const client = await connectCodemux(["--config", configFile]);
  try {
    const viaMs = await sample(SAMPLES, () => client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } }));
    const trivialMs = await sample(SAMPLES, () => client.callTool({ name: "execute_code", arguments: { code: "export default 1 + 1" } }));

    const chainCode = `
      import { echo } from "mcp/servers/m/echo";
      let text = "0";
      for (let i = 0; i < 20; i++) text = String(await echo({ text: String(Number(text) + 1) }));
      export default text;`;
    const chain = await execute(client, chainCode);
    if (chain.body.result !== "20") throw new Error(`chain returned ${JSON.stringify(chain.body)}`);
    const chainMs = await median(() => execute(client, chainCode));
    const roundTripsMs = await median(async () => {
      let text = "0";
      for (let i = 0; i < 20; i++) text = textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: String(Number(text) + 1) } } }));
    });
    const parallelMs = await median(() => execute(client, `
      import { echo } from "mcp/servers/m/echo";
      export default (await Promise.all(Array.from({ length: 100 }, (_, i) => echo({ text: String(i) })))).length;`));
    const slow = await execute(client, `
      import { slow } from "mcp/servers/m/slow";
      await Promise.all(Array.from({ length: 10 }, () => slow({ ms: 400, steps: 1 })));
      export default "done";`);

    return {
      call: {
        directP50Ms: round(percentile(directMs, 50)),
        directP99Ms: round(percentile(directMs, 99)),
        codemuxP50Ms: round(percentile(viaMs, 50)),
        codemuxP99Ms: round(percentile(viaMs, 99)),
        ratioP50: round(percentile(viaMs, 50) / percentile(directMs, 50)),
        samples: SAMPLES,
      },
      execute: {
        trivialP50Ms: round(percentile(trivialMs, 50)),
        trivialP99Ms: round(percentile(trivialMs, 99)),
        chain20InOneSnippetMs: round(chainMs),
        chain20AsCallToolMs: round(roundTripsMs),
        parallel100Ms: round(parallelMs),
        ten400msCallsMs: round(slow.ms),
        samples: SAMPLES,
      },
    };
  } finally {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }
}
