#!/usr/bin/env node
// The cost of tracing on call_tool (docs/perf/tracing.md). One process per run, runs interleaved:
//   node apps/bench/tracing-bench.mjs [--baseline /path/to/other/checkout] [--rounds 5] [--calls 3000]
// Each run: codemux in process with the misbehaving test server over stdio, an SDK client over an
// in-memory pair, `call_tool m__echo` warmed then timed; p50 (us) and CPU (us of this process per call).
// Modes: `off` (no provider: the API's no-op), `on` (the SDK's provider, batch processor and OTLP/HTTP
// JSON exporter to a receiver in the same process, every span sampled). A baseline checkout runs `off` too.
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};

if (flag("--run") !== undefined) await run(resolve(flag("--root")), flag("--run"), Number(flag("--calls", "3000")));
else drive();

/** Interleaves runs of each mode, one process each, and prints the medians. */
function drive() {
  const rounds = Number(flag("--rounds", "5"));
  const calls = flag("--calls", "3000");
  const root = resolve(here, "../..");
  const baseline = flag("--baseline");
  const plans = [...(baseline ? [["baseline off", resolve(baseline), "off"]] : []), ["off", root, "off"], ["on", root, "on"]];
  const results = new Map(plans.map(([label]) => [label, []]));
  process.stdout.write(
    `node ${process.version}, ${cpus().length} cores, load ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}\n`,
  );
  for (let round = 0; round < rounds; round++) {
    for (const [label, dir, mode] of plans) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--run", mode, "--root", dir, "--calls", calls], { encoding: "utf8" });
      if (child.status !== 0) throw new Error(`${label}: ${child.stderr}`);
      const result = JSON.parse(child.stdout.trim().split("\n").at(-1));
      results.get(label).push(result);
      process.stdout.write(`round ${round + 1} ${label.padEnd(12)} p50 ${result.p50Us} us, cpu ${result.cpuUsPerCall} us/call, spans ${result.spans}\n`);
    }
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  process.stdout.write(
    `load after ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}\nmedians of ${rounds} rounds:\n`,
  );
  for (const [label, list] of results) {
    process.stdout.write(
      `  ${label.padEnd(12)} p50 ${median(list.map((r) => r.p50Us))} us, p99 ${median(list.map((r) => r.p99Us))} us, cpu ${median(list.map((r) => r.cpuUsPerCall))} us/call\n`,
    );
  }
}

/** One run: prints `{ p50Us, p99Us, cpuUsPerCall, spans }` as its last line. */
async function run(root, mode, calls) {
  const require = createRequire(join(root, "apps/bench/package.json"));
  const load = (name) => import(pathToFileURL(require.resolve(name)).href);
  let spans = 0;
  let provider;
  if (mode === "on") {
    const receiver = createServer(async (req, res) => {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      spans += (
        Buffer.concat(chunks)
          .toString("utf8")
          .match(/"spanId"/g) ?? []
      ).length;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    }).listen(0, "127.0.0.1");
    await once(receiver, "listening");
    receiver.unref();
    const cli = createRequire(join(root, "apps/cli/package.json"));
    const loadCli = (name) => import(pathToFileURL(cli.resolve(name)).href);
    const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
      loadCli("@opentelemetry/sdk-trace-node"),
      loadCli("@opentelemetry/sdk-trace-base"),
      loadCli("@opentelemetry/exporter-trace-otlp-http"),
    ]);
    const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${receiver.address().port}/v1/traces` });
    provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
    provider.register();
  }
  const [{ parseConfig }, { Codemux, createSessionServer }, { misbehavingServerPath }, { Client }, { InMemoryTransport }] = await Promise.all([
    load("@codemux/pool"),
    load("@codemux/server"),
    load("@codemux/test-servers"),
    load("@modelcontextprotocol/sdk/client/index.js"),
    load("@modelcontextprotocol/sdk/inMemory.js"),
  ]);
  const config = parseConfig(JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }), {
    file: "bench",
    env: process.env,
  });
  const core = new Codemux({ config });
  core.start();
  await core.ready();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const client = new Client({ name: "tracing-bench", version: "1.0.0" });
  await client.connect(clientSide);
  const call = () => client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } });
  for (let i = 0; i < calls; i++) await call();
  const samples = [];
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await call();
    samples.push((performance.now() - started) * 1000);
  }
  const cpu = process.cpuUsage(cpuStart);
  await provider?.forceFlush();
  samples.sort((a, b) => a - b);
  const at = (p) => Math.round(samples[Math.min(samples.length - 1, Math.floor(p * samples.length))]);
  const result = { p50Us: at(0.5), p99Us: at(0.99), cpuUsPerCall: Math.round((cpu.user + cpu.system) / calls), spans };
  await client.close();
  await core.close();
  await provider?.shutdown();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
