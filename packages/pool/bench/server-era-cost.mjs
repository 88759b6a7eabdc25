// What one tools/call costs the 2026-era test server (SDK v2) when asked in 2026-07-28 or in 2025-11-25: its own CPU a call
// (/proc, Linux) and the round trip, one request in flight, the variants interleaved (build first: pnpm build).
//   node bench/server-era-cost.mjs [calls per round = 4000] [rounds = 5]
import { modernServerPath } from "@codemux/test-servers";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) * 10000;
};
const env26 = (caps, extra = {}) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "codemux", version: "0.1.0" },
  "io.modelcontextprotocol/clientCapabilities": caps,
  ...extra,
});
/** An echo call, with `_meta` when given. */
const call = (id, _meta) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text: "ping" }, ...(_meta ? { _meta } : {}) } });
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const variants = {
  "26 as codemux": (id) => call(id, env26(TASKS, { progressToken: id })),
  "26 no token": (id) => call(id, env26(TASKS)),
  "26 bare caps": (id) => call(id, env26({})),
  "25 token": (id) => call(id, { progressToken: id }),
  "25 plain": (id) => call(id),
};
const N = Number(process.argv[2] ?? 4000);
const rounds = Number(process.argv[3] ?? 5);
if (!Number.isInteger(N) || N < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error("usage: node bench/server-era-cost.mjs [calls per round, a whole number] [rounds, a whole number]");
  process.exit(2);
}
const start = async (era) => {
  const child = spawn(process.execPath, [modernServerPath], { stdio: ["pipe", "pipe", "inherit"] });
  let buf = "";
  let waiting;
  child.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const m = JSON.parse(line);
      if (m.id !== undefined && waiting) {
        const w = waiting;
        waiting = undefined;
        w(m);
      }
    }
  });
  const ask = (m) =>
    new Promise((r) => {
      waiting = r;
      child.stdin.write(JSON.stringify(m) + "\n");
    });
  if (era === "25") {
    await ask({
      jsonrpc: "2.0",
      id: "i",
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  }
  return { child, ask };
};
const procs = {};
for (const v of Object.keys(variants)) procs[v] = await start(v.slice(0, 2));
let id = 0;
for (const v of Object.keys(variants))
  for (let i = 0; i < 3000; i++) {
    const r = await procs[v].ask(variants[v](++id));
    if (i === 0 && !r.result) throw new Error(`${v}: the server answered ${JSON.stringify(r).slice(0, 300)}`);
  }
const res = Object.fromEntries(Object.keys(variants).map((v) => [v, { cpu: [], lat: [] }]));
const names = Object.keys(variants);
for (let r = 0; r < rounds; r++)
  for (let k = 0; k < names.length; k++) {
    const v = names[(k + r) % names.length];
    const p = procs[v];
    const c0 = cpuOf(p.child.pid);
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await p.ask(variants[v](++id));
    res[v].cpu.push((cpuOf(p.child.pid) - c0) / N);
    res[v].lat.push(((performance.now() - t0) * 1000) / N);
  }
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
for (const v of names)
  console.log(
    `${v.padEnd(14)} server cpu ${med(res[v].cpu).toFixed(0)} µs (${Math.min(...res[v].cpu).toFixed(0)}-${Math.max(...res[v].cpu).toFixed(0)})  round trip ${med(res[v].lat).toFixed(0)} µs`,
  );
for (const p of Object.values(procs)) p.child.kill();
