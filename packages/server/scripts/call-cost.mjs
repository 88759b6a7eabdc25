// CPU per tools/call of codemux's own work, in process, after `pnpm build`: the pipeline, the code
// surface's call_tool, and the stdio serving path (lines in, lines out over in-process streams) with
// the fast lane (default) or through the SDK Server (SDK=1). The downstream answers at once, so no
// pipe or server time is counted. N=20000 calls after as many warm-up calls; STRUCTURED=1 answers
// with structured content. Usage: node scripts/call-cost.mjs
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { parseConfig } from "@codemux/pool";
import { Codemux } from "@codemux/server";
import { serveStdio } from "@codemux/server/stdio";

const N = Number(process.env.N ?? 20000);
const structured = process.env.STRUCTURED === "1";

class InstantPool extends EventEmitter {
  names = ["m"];
  status() {
    return [{ name: "m", state: "ready" }];
  }
  async start() {
    this.emit("tools", "m", [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }]);
  }
  async callTool(_server, _tool, args) {
    const value = { v: args.text, list: [1, 2, 3] };
    return structured
      ? { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value }
      : { content: [{ type: "text", text: String(args.text) }] };
  }
  async close() {}
}

const core = new Codemux({ config: parseConfig(JSON.stringify({ mcpServers: {} }), { file: "call-cost", env: {} }), pool: new InstantPool() });
core.start();
await core.ready();

async function measure(label, fn) {
  for (let i = 0; i < N; i++) await fn();
  const before = process.cpuUsage();
  for (let i = 0; i < N; i++) await fn();
  const used = process.cpuUsage(before);
  console.log(`${label.padEnd(44)} ${((used.user + used.system) / N).toFixed(1)} us CPU per call`);
}

const session = core.session();
const ctx = { core, session, origin: "call_tool", signal: new AbortController().signal, requestId: "1" };
await measure("pipeline.call", () => core.pipeline.call({ name: "m__echo", arguments: { text: "ping" }, origin: "call_tool", session, signal: ctx.signal }));
await measure("code surface call_tool", () => core.surface().callTool("call_tool", { name: "m__echo", args: { text: "ping" } }, ctx));

const stdin = new PassThrough();
const stdout = new PassThrough();
const waiting = new Map();
let buffer = "";
stdout.on("data", (chunk) => {
  buffer += chunk.toString();
  for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
    const message = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  }
});
const serving = serveStdio(core.sessions, { stdin, stdout, fastLane: process.env.SDK !== "1" });
const request = (id, method, params) =>
  new Promise((resolve) => {
    waiting.set(id, resolve);
    stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  });
await request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "call-cost", version: "1" } });
let id = 1;
await measure(`stdio tools/call, ${process.env.SDK === "1" ? "SDK Server" : "fast lane"} (lines in/out)`, () =>
  request(id++, "tools/call", { name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } }),
);
stdin.end();
await serving;
await core.close();
