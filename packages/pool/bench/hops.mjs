// The downstream hop of a call, piece by piece, in process (build first: pnpm build). Median of 7 rounds.
//   node bench/hops.mjs
// Sync pieces: what the SDK's request path runs on each answer, against the lane. Async rows: a whole call
// over bench/loopback.mjs (no pipe, no other process) through each path of the same build.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, JSONRPCMessageSchema, isJSONRPCResultResponse } from "@modelcontextprotocol/sdk/types.js";
// The parse the SDK's request path runs on a result (its zod-compat hands zod 4 schemas to zod/v4-mini).
import { safeParse } from "zod/v4-mini";
import { ServerPool } from "../dist/index.js";
import { LoopbackTransport } from "./loopback.mjs";

const line = JSON.stringify({ jsonrpc: "2.0", id: "codemux-1", result: { content: [{ type: "text", text: "ping" }] } });
const answer = JSON.parse(line);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function sync(label, fn, n = 200_000) {
  for (let i = 0; i < n / 4; i++) fn();
  const rounds = [];
  for (let r = 0; r < 7; r++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) fn();
    rounds.push(((performance.now() - t) * 1e6) / n);
  }
  console.log(`${label.padEnd(58)} ${(median(rounds) / 1000).toFixed(2).padStart(7)} us`);
}

async function calls(label, fn, n = 20_000) {
  for (let i = 0; i < n; i++) await fn();
  const rounds = [];
  for (let r = 0; r < 7; r++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn();
    rounds.push(((performance.now() - t) * 1000) / n);
  }
  console.log(`${label.padEnd(58)} ${median(rounds).toFixed(2).padStart(7)} us`);
}

sync("JSON.parse of an echo answer line", () => JSON.parse(line));
sync("SDK stdio transport: JSONRPCMessageSchema.parse", () => JSONRPCMessageSchema.safeParse(answer));
sync("SDK Protocol: isJSONRPCResultResponse (runs 3x per answer)", () => isJSONRPCResultResponse(answer));
sync("SDK request: safeParse(CallToolResultSchema, result)", () => safeParse(CallToolResultSchema, answer.result));
sync("setTimeout + clearTimeout (one per call on both paths)", () => clearTimeout(setTimeout(() => undefined, 60_000)));
const controller = new AbortController();
const listener = () => undefined;
sync(
  "abort listener add + remove (the lane; the SDK only adds)",
  () => {
    controller.signal.addEventListener("abort", listener);
    controller.signal.removeEventListener("abort", listener);
  },
  50_000,
);
sync("new AbortController + its signal (the SDK path, per request)", () => new AbortController().signal, 50_000);

const spec = () => ({
  name: "m",
  transport: { type: "stdio", command: "loopback", args: [], env: {} },
  callTimeoutMs: 60_000,
  connectTimeoutMs: 10_000,
  tools: {},
});
const lanePool = new ServerPool([spec()], { retryDelaysMs: [], callLane: true, createTransport: () => new LoopbackTransport() });
// The same loopback with the lane off: the pool's SDK request path, in the same build.
const sdkPool = new ServerPool([spec()], { retryDelaysMs: [], callLane: false, createTransport: () => new LoopbackTransport() });
await Promise.all([lanePool.start(), sdkPool.start()]);
const client = new Client({ name: "bench", version: "1.0.0" });
await client.connect(new LoopbackTransport());
const args = { text: "ping" };
const withSignal = () => ({ signal: new AbortController().signal, onprogress: () => undefined });
await calls("loopback call: bare SDK Client.callTool", () => client.callTool({ name: "echo", arguments: args }));
await calls("loopback call: pool, SDK request path", () => sdkPool.callTool("m", "echo", args));
await calls("loopback call: pool, lane", () => lanePool.callTool("m", "echo", args));
await calls("loopback call: pool, SDK request path, signal + onprogress", () => sdkPool.callTool("m", "echo", args, withSignal()));
await calls("loopback call: pool, lane, signal + onprogress", () => lanePool.callTool("m", "echo", args, withSignal()));
await Promise.all([lanePool.close(), sdkPool.close(), client.close()]);
