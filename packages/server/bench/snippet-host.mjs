// Host CPU of 100 parallel tool calls (issue 11), after `pnpm build`, in process, against the test server:
//   node bench/snippet-host.mjs pipeline  — 100 calls at once through core.callTool, each with its own
//       AbortController, JSON.parse'd arguments and a JSON.stringify'd result, as a snippet's calls come
//       from the sandbox, and one signal for the batch as executeCode gives them; prints CPU per call.
//   node bench/snippet-host.mjs snippet   — execute_code of a snippet awaiting 100 calls with Promise.all;
//       prints the main thread's CPU per call (Linux /proc) and each thread's CPU per snippet.
// Env: N (batches or snippets, default 1000 / 600), PROF=file.cpuprofile (main thread, in the measured loop).
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { parseConfig } from "@codemux/pool";
import { misbehavingServerPath } from "@codemux/test-servers";
import { Codemux } from "../dist/index.js";

const mode = process.argv[2] ?? "snippet";
const config = parseConfig(JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }), {
  file: "bench",
  env: process.env,
});
const core = new Codemux({ config });
core.start();
await core.ready();
const session = core.session();

/** CPU ticks (1/100 s) of each thread of this process, by thread id. */
function threadTicks() {
  const out = new Map();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
      out.set(tid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // The thread ended.
    }
  }
  return out;
}

async function profiled(fn) {
  if (!process.env.PROF) return fn();
  const inspector = new Session();
  inspector.connect();
  await inspector.post("Profiler.enable");
  await inspector.post("Profiler.setSamplingInterval", { interval: 100 });
  await inspector.post("Profiler.start");
  const out = await fn();
  const { profile } = await inspector.post("Profiler.stop");
  writeFileSync(process.env.PROF, JSON.stringify(profile));
  return out;
}

if (mode === "pipeline") {
  let run;
  const one = (i) => {
    const controller = new AbortController();
    const args = JSON.parse(`{"text":"${i}"}`);
    return core
      .callTool({ name: "m__echo", arguments: args, origin: "execute_code", session, signal: controller.signal, downstreamSignal: run.signal })
      .then((r) => JSON.stringify(r));
  };
  const batch = async () => {
    run = new AbortController();
    try {
      return await Promise.all(Array.from({ length: 100 }, (_, i) => one(i)));
    } finally {
      run.abort(new Error("The sandbox run ended."));
    }
  };
  for (let i = 0; i < 500; i++) await batch();
  const n = Number(process.env.N ?? 1000);
  const rounds = await profiled(async () => {
    const out = [];
    for (let r = 0; r < 5; r++) {
      const cpu = process.cpuUsage();
      for (let i = 0; i < n / 5; i++) await batch();
      const used = process.cpuUsage(cpu);
      out.push((used.user + used.system) / (n / 5) / 100);
    }
    return out.sort((a, b) => a - b);
  });
  console.log(`pipeline: host CPU per call ${rounds[2].toFixed(1)} µs (median of 5 rounds; min ${rounds[0].toFixed(1)})`);
} else {
  const code = `import { echo } from "mcp/servers/m/echo";
export default (await Promise.all(Array.from({ length: 100 }, (_, i) => echo({ text: String(i) })))).length;`;
  const surface = core.surface();
  const context = { core, session, origin: "call_tool", signal: new AbortController().signal, requestId: "bench" };
  const run = () => surface.callTool("execute_code", { code }, context);
  if (!JSON.stringify(await run()).includes("100")) throw new Error("the snippet did not make its 100 calls");
  for (let i = 0; i < 100; i++) await run();
  const n = Number(process.env.N ?? 600);
  const before = threadTicks();
  const times = await profiled(async () => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      await run();
      out.push(performance.now() - started);
    }
    return out.sort((a, b) => a - b);
  });
  const after = threadTicks();
  const main = String(process.pid);
  const perSnippetUs = (tid) => (((after.get(tid) ?? 0) - (before.get(tid) ?? 0)) * 10_000) / n;
  const others = [...after.keys()]
    .filter((tid) => tid !== main)
    .map((tid) => perSnippetUs(tid))
    .filter((us) => us > 0)
    .sort((a, b) => b - a);
  console.log(
    `snippet: median ${times[n >> 1].toFixed(2)} ms; main thread CPU per call ${(perSnippetUs(main) / 100).toFixed(1)} µs; CPU per snippet: main ${(perSnippetUs(main) / 1000).toFixed(2)} ms, other threads ${others.map((us) => (us / 1000).toFixed(2)).join(", ")} ms`,
  );
}
await core.close();
