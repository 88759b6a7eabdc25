// Pool-level micro bench of a warmed downstream tools/call (build first: pnpm build).
//   node bench/call.mjs [sdk|raw|loop] [rounds]  p50 / mean per call, interleaved with a direct SDK client
//   node --cpu-prof bench/call.mjs raw profile  only pool calls, for a CPU profile
//   POOL_BEFORE=<another build's dist/index.js> adds that build's pool, interleaved: a before/after in one run
// `sdk` is the misbehaving test server (the SDK's Server, zod on its side too); `raw` a bare JSON-RPC echo
// (test/fixtures/raw-server.mjs), which leaves the client side alone in the figures; `loop` answers in
// process (bench/loopback.mjs): no pipe, no scheduler, the client side's CPU per call alone.
import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";
import { ServerPool } from "../dist/index.js";
import { LoopbackTransport } from "./loopback.mjs";

const [kind = "raw", mode = "10"] = process.argv.slice(2);
const serverPath = kind === "sdk" ? misbehavingServerPath : fileURLToPath(new URL("../test/fixtures/raw-server.mjs", import.meta.url));
const WARMUP = Number(process.env.WARMUP ?? 5000);
const PER_ROUND = 500;

const makePool = async (Pool) => {
  const made = new Pool(
    [
      {
        name: "m",
        transport: { type: "stdio", command: process.execPath, args: [serverPath], env: {} },
        callTimeoutMs: 60_000,
        connectTimeoutMs: 10_000,
        tools: {},
      },
    ],
    { retryDelaysMs: [], ...(kind === "loop" ? { createTransport: () => new LoopbackTransport() } : {}) },
  );
  await made.start();
  return made;
};
const pool = await makePool(ServerPool);
const before = process.env.POOL_BEFORE ? await makePool((await import(process.env.POOL_BEFORE)).ServerPool) : undefined;
const args = { text: "ping" };
const poolCall = () => pool.callTool("m", "echo", args);
// What codemux's server passes: a signal of the client request and a progress callback.
const withSignal = () => ({ signal: new AbortController().signal, onprogress: () => undefined });
const poolCallSignal = () => pool.callTool("m", "echo", args, withSignal());

const direct = new Client({ name: "bench", version: "1.0.0" });
await direct.connect(
  kind === "loop" ? new LoopbackTransport() : new StdioClientTransport({ command: process.execPath, args: [serverPath], stderr: "inherit" }),
);
const directCall = () => direct.callTool({ name: "echo", arguments: args });

if (mode === "profile") {
  // PROFILE=direct profiles the direct client instead, for comparison.
  const fn = process.env.PROFILE === "direct" ? directCall : poolCallSignal;
  for (let i = 0; i < 40_000; i++) await fn();
  await Promise.all([pool.close(), direct.close(), before?.close()]);
  process.exit(0);
}

const contenders = { direct: directCall, pool: poolCall, "pool+signal": poolCallSignal };
if (before) {
  contenders.before = () => before.callTool("m", "echo", args);
  contenders["before+signal"] = () => before.callTool("m", "echo", args, withSignal());
}
for (const fn of Object.values(contenders)) for (let i = 0; i < WARMUP; i++) await fn();
const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
// CPU time of this process per call (user + system): the client side's own cost, less noisy than wall time.
const cpu = Object.fromEntries(Object.keys(contenders).map((k) => [k, 0]));
const names = Object.keys(contenders);
for (let r = 0; r < Number(mode); r++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + r) % names.length];
    const fn = contenders[name];
    const before = process.cpuUsage();
    for (let i = 0; i < PER_ROUND; i++) {
      const t = performance.now();
      await fn();
      samples[name].push(performance.now() - t);
    }
    const used = process.cpuUsage(before);
    cpu[name] += used.user + used.system;
  }
}
const p = (xs, q) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)];
const us = (ms) => `${Math.round(ms * 1000)} us`;
const d50 = p(samples.direct, 0.5);
for (const name of names) {
  const xs = samples[name];
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const cpuUs = Math.round(cpu[name] / xs.length);
  console.log(
    `${kind} ${name.padEnd(13)} p50 ${us(p(xs, 0.5))}  mean ${us(mean)}  p99 ${us(p(xs, 0.99))}  cpu ${cpuUs} us/call  x${(p(xs, 0.5) / d50).toFixed(2)} direct`,
  );
}
await Promise.all([pool.close(), direct.close(), before?.close()]);
