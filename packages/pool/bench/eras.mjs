// Pool CPU per warmed tools/call with the call lane on and off, before a 2025-era and a 2026-era stdio server (build first: pnpm build).
//   node bench/eras.mjs [raw|sdk] [rounds]
// `raw` is the bare JSON-RPC echo (test/fixtures/raw-server.mjs, `--modern` for 2026): the client side alone; `sdk` the SDK
// test servers (the misbehaving one on SDK 1.x for 2025, modern.ts on SDK v2 for 2026). Every call carries what codemux's
// server passes (a signal, onprogress, the caller's capabilities, the first input round). CPU is this process's user +
// system time (the servers are children: not counted) over rounds of 500 calls, the contenders interleaved, order turning.
// POOL_BEFORE=<another build's dist/index.js> adds that build's pool with the lane on, for a before/after in one run.
import { misbehavingServerPath, modernServerPath } from "@codemux/test-servers";
import { fileURLToPath } from "node:url";
import { ServerPool } from "../dist/index.js";

const [kind = "raw", rounds = "10"] = process.argv.slice(2);
const raw = fileURLToPath(new URL("../test/fixtures/raw-server.mjs", import.meta.url));
const WARMUP = Number(process.env.WARMUP ?? 3000);
const PER_ROUND = 500;
const servers = {
  2025: kind === "sdk" ? [misbehavingServerPath] : [raw],
  2026: kind === "sdk" ? [modernServerPath, "--legacy", "reject"] : [raw, "--modern"],
};

const makePool = async (Pool, args, callLane) => {
  const made = new Pool(
    [{ name: "m", transport: { type: "stdio", command: process.execPath, args, env: {} }, callTimeoutMs: 60_000, connectTimeoutMs: 10_000, tools: {} }],
    { retryDelaysMs: [], callLane },
  );
  await made.start();
  return made;
};

const capabilities = { roots: { listChanged: true }, elicitation: { form: {} } };
const args = { text: "ping" };
const options = () => ({ signal: new AbortController().signal, onprogress: () => undefined, clientCapabilities: capabilities, inputRequired: {} });
const contenders = {};
const pools = [];
const Before = process.env.POOL_BEFORE ? (await import(process.env.POOL_BEFORE)).ServerPool : undefined;
for (const era of ["2025", "2026"]) {
  for (const [label, Pool, lane] of [["lane", ServerPool, true], ["sdk", ServerPool, false], ...(Before ? [["before", Before, true]] : [])]) {
    const pool = await makePool(Pool, servers[era], lane);
    pools.push(pool);
    if (pool.status()[0]?.protocol?.startsWith(era) !== true) throw new Error(`${era} ${label}: connected as ${pool.status()[0]?.protocol}`);
    contenders[`${era} ${label}`] = () => pool.callTool("m", "echo", args, options());
  }
}
for (const fn of Object.values(contenders)) for (let i = 0; i < WARMUP; i++) await fn();
const names = Object.keys(contenders);
const samples = Object.fromEntries(names.map((k) => [k, []]));
const cpu = Object.fromEntries(names.map((k) => [k, []]));
for (let r = 0; r < Number(rounds); r++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + r) % names.length];
    const fn = contenders[name];
    const start = process.cpuUsage();
    for (let i = 0; i < PER_ROUND; i++) {
      const t = performance.now();
      await fn();
      samples[name].push(performance.now() - t);
    }
    const used = process.cpuUsage(start);
    cpu[name].push((used.user + used.system) / PER_ROUND);
  }
}
const q = (xs, at) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * at)];
for (const name of names) {
  const rs = cpu[name];
  console.log(
    `${kind} ${name.padEnd(12)} cpu/call median ${q(rs, 0.5).toFixed(1)} us (rounds ${q(rs, 0).toFixed(1)}-${q(rs, 1).toFixed(1)})  p50 ${Math.round(q(samples[name], 0.5) * 1000)} us`,
  );
}
await Promise.all(pools.map((p) => p.close()));
