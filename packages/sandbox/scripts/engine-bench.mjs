// Measures the engine's cost: preparing a fresh engine (in process), and back-to-back trivial runs
// through new Sandbox(). Usage: node scripts/engine-bench.mjs (after pnpm build).
import { rmSync } from "node:fs";
import { build } from "esbuild";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Sandbox } from "../dist/index.js";

const here = fileURLToPath(new URL(".", import.meta.url));
// Inside node_modules, so the bundle resolves the package's dependencies.
const out = `${here}../node_modules/.cache/engine-bench-${process.pid}.mjs`;
// RUNTIME_SRC: another copy of src/quickjs/quickjs-runtime.ts, to compare.
await build({
  entryPoints: [process.env.RUNTIME_SRC ?? `${here}../src/quickjs/quickjs-runtime.ts`],
  bundle: true,
  format: "esm",
  platform: "node",
  outfile: out,
  packages: "external",
  logLevel: "error",
});
const { createQuickJSRuntime } = await import(out);
if (!process.env.KEEP_BUNDLE) rmSync(out);

const host = { call: async () => "1", write: () => 1e6, isAborted: () => false, signal: new AbortController().signal };
const limits = { memoryLimitBytes: 64 << 20, maxResultBytes: 1 << 20 };
const request = () => ({ code: "export default 1 + 1;", filename: "snippet.js", deadline: Date.now() + 5000, limits });
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)];

// In process: each run, then wait until the next engine is ready; CPU per (run + prepare), all included (GC too).
const runtime = await createQuickJSRuntime({ memoryLimitBytes: 64 << 20 });
const N = Number(process.env.N ?? 400);
for (let i = 0; i < 50; i++) {
  await runtime.run(request(), host);
  await runtime.ready();
}
let c0 = cpu();
let t0 = performance.now();
const prep = [];
for (let i = 0; i < N; i++) {
  await runtime.run(request(), host);
  const p0 = performance.now();
  await runtime.ready();
  prep.push(performance.now() - p0);
}
const inProcCpu = (cpu() - c0) / N;
const inProcWall = (performance.now() - t0) / N;
console.log(`in process: run+prepare CPU ${inProcCpu.toFixed(3)} ms/run, wall ${inProcWall.toFixed(3)} ms/run, ready-wait p50 ${pct(prep, 0.5).toFixed(3)} ms`);

// Through new Sandbox(): back to back, one worker.
const sandbox = new Sandbox({ workers: 1 });
for (let i = 0; i < 100; i++) await sandbox.execute({ code: "export default 1 + 1" });
const lat = [];
c0 = cpu();
t0 = performance.now();
for (let i = 0; i < N; i++) {
  const s = performance.now();
  await sandbox.execute({ code: "export default 1 + 1" });
  lat.push(performance.now() - s);
}
console.log(
  `Sandbox back to back: p50 ${pct(lat, 0.5).toFixed(3)} ms, p90 ${pct(lat, 0.9).toFixed(3)} ms, process CPU ${((cpu() - c0) / N).toFixed(3)} ms/run`,
);
// Paced: 3 ms apart, so the engine is ready when the run comes.
const paced = [];
for (let i = 0; i < 200; i++) {
  await new Promise((r) => setTimeout(r, 3));
  const s = performance.now();
  await sandbox.execute({ code: "export default 1 + 1" });
  paced.push(performance.now() - s);
}
console.log(`Sandbox paced 3 ms: p50 ${pct(paced, 0.5).toFixed(3)} ms`);
await sandbox.close?.();
process.exit(0);
