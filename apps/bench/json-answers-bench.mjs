#!/usr/bin/env node
// The cost of a Streamable HTTP answer with and without the SDK's SSE stream (CODEMUX_JSON_ANSWERS,
// docs/perf/peers.md). One process per run, runs interleaved:
//   node apps/bench/json-answers-bench.mjs [--rounds 5] [--calls 2000] [--bytes 0|20000]
// Each run: codemux's HTTP server in process (one token, default limits, passthrough) in front of the
// misbehaving test server over stdio; one keep-alive client in the same process POSTs `tools/call`
// (`m__echo`, or `m__huge` with --bytes) on one session, warmed then timed. CPU is this process's per
// call (the client's share is the same in both modes: both answer one JSON body), p50 in us.
import { spawnSync } from "node:child_process";
import { Agent, request } from "node:http";
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

if (flag("--run") !== undefined) await run(resolve(here, "../.."), Number(flag("--calls", "2000")), Number(flag("--bytes", "0")));
else drive();

/** Interleaves runs with the switch off and on, one process each, and prints the medians. */
function drive() {
  const rounds = Number(flag("--rounds", "5"));
  const calls = flag("--calls", "2000");
  const bytes = flag("--bytes", "0");
  const modes = [
    ["off (SDK stream read back)", "0"],
    ["on (answer as JSON)", "1"],
  ];
  const results = new Map(modes.map(([label]) => [label, []]));
  process.stdout.write(
    `node ${process.version}, ${cpus().length} cores, answer ${bytes === "0" ? "echo" : `${bytes} bytes`}, load ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}\n`,
  );
  for (let round = 0; round < rounds; round++) {
    for (const [label, value] of round % 2 === 0 ? modes : [...modes].reverse()) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--run", "1", "--calls", calls, "--bytes", bytes], {
        encoding: "utf8",
        env: { ...process.env, CODEMUX_JSON_ANSWERS: value },
      });
      if (child.status !== 0) throw new Error(`${label}: ${child.stderr}`);
      const result = JSON.parse(child.stdout.trim().split("\n").at(-1));
      results.get(label).push(result);
      process.stdout.write(`round ${round + 1} ${label.padEnd(28)} p50 ${result.p50Us} us, cpu ${result.cpuUsPerCall} us/call\n`);
    }
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  process.stdout.write(
    `load after ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}\nmedians of ${rounds} rounds:\n`,
  );
  for (const [label, list] of results) {
    process.stdout.write(`  ${label.padEnd(28)} p50 ${median(list.map((r) => r.p50Us))} us, cpu ${median(list.map((r) => r.cpuUsPerCall))} us/call\n`);
  }
}

/** One run: prints `{ p50Us, cpuUsPerCall }` as its last line. */
async function run(root, calls, bytes) {
  const bench = createRequire(join(root, "apps/bench/package.json"));
  const cli = createRequire(join(root, "apps/cli/package.json"));
  const load = (from, name) => import(pathToFileURL(from.resolve(name)).href);
  const [{ parseConfig }, { Codemux }, { misbehavingServerPath }, { CodemuxHttpServer, httpCallRecorders }] = await Promise.all([
    load(bench, "@codemux/pool"),
    load(bench, "@codemux/server"),
    load(bench, "@codemux/test-servers"),
    load(cli, "@codemux/http"),
  ]);
  const config = parseConfig(JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }), {
    file: "bench",
    env: process.env,
  });
  const recorders = httpCallRecorders();
  const core = new Codemux({ config, middleware: recorders.middleware });
  core.start();
  await core.ready();
  const token = "bench-token-0123456789";
  const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "bench", token }], mode: "passthrough", log: () => undefined, recorders });
  await http.listen();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  const post = (body, extra = {}) =>
    new Promise((resolveAnswer, reject) => {
      const req = request(`${http.url}/mcp`, { method: "POST", agent, headers: { ...headers, ...extra } }, (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () => resolveAnswer({ headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(JSON.stringify(body));
    });
  const init = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  });
  const session = { "mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25" };
  await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
  const params = bytes > 0 ? { name: "m__huge", arguments: { bytes } } : { name: "m__echo", arguments: { text: "ping" } };
  let id = 1;
  const call = async () => {
    const answer = await post({ jsonrpc: "2.0", id: id++, method: "tools/call", params }, session);
    if (!answer.headers["content-type"]?.startsWith("application/json")) throw new Error(`not a JSON answer: ${answer.text.slice(0, 200)}`);
  };
  for (let i = 0; i < Math.min(calls, 500); i++) await call();
  const samples = [];
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await call();
    samples.push((performance.now() - started) * 1000);
  }
  const cpu = process.cpuUsage(cpuStart);
  samples.sort((a, b) => a - b);
  const result = { p50Us: Math.round(samples[Math.floor(samples.length / 2)]), cpuUsPerCall: Math.round((cpu.user + cpu.system) / calls) };
  agent.destroy();
  await http.close();
  await core.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
