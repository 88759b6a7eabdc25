// A client's tools/call through one session, in process (SDK client over an in-memory pair), after `pnpm build`:
//   node bench/session-call.mjs
// Env: MODE (passthrough, the default, or code: call_tool), CATALOGS (a folder of recorded tools/list JSON files
// served by the replay server beside the test server, e.g. ../../../shared/benchmarks/real-catalogs; none by default),
// SERVER_BEFORE (another build's dist/index.js, measured interleaved with this one). Prints p50/p99 and the
// process's CPU per call (client and codemux; the downstream servers are other processes).
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { parseConfig } from "@codemux/pool";
import { misbehavingServerPath, replayServerPath } from "@codemux/test-servers";

const mode = process.env.MODE ?? "passthrough";
const servers = { m: { command: process.execPath, args: [misbehavingServerPath] } };
const catalogs = process.env.CATALOGS;
if (catalogs)
  for (const file of readdirSync(catalogs).filter((f) => f.endsWith(".json")))
    servers[file.slice(0, -5)] = { command: process.execPath, args: [replayServerPath, join(catalogs, file)] };
const config = parseConfig(JSON.stringify({ mcpServers: servers }), { file: "bench", env: process.env });

async function open(path) {
  const { Codemux, createSessionServer } = await import(path);
  const core = new Codemux({ config, mode });
  core.start();
  await core.ready();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(clientSide);
  return { core, client };
}

const call =
  mode === "passthrough"
    ? (client) => client.callTool({ name: "m__echo", arguments: { text: "ping" } })
    : (client) => client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "ping" } } });
const sides = { this: await open("../dist/index.js") };
if (process.env.SERVER_BEFORE) sides.before = await open(pathToFileURL(resolve(process.env.SERVER_BEFORE)).href);
console.log(`mode ${mode}, ${sides.this.core.catalog.size} tools in the catalog`);
const results = Object.fromEntries(Object.keys(sides).map((name) => [name, { times: [], cpuUs: 0, calls: 0 }]));
for (const { client } of Object.values(sides)) for (let i = 0; i < 300; i++) await call(client);
const BLOCK = 400;
for (let round = 0; round < 8; round++) {
  const names = Object.keys(sides);
  for (const name of round % 2 ? names.reverse() : names) {
    const { client } = sides[name];
    const r = results[name];
    const before = process.cpuUsage();
    for (let i = 0; i < BLOCK; i++) {
      const started = performance.now();
      await call(client);
      r.times.push(performance.now() - started);
    }
    const used = process.cpuUsage(before);
    r.cpuUs += used.user + used.system;
    r.calls += BLOCK;
  }
}
const at = (times, q) => [...times].sort((a, b) => a - b)[Math.floor((times.length - 1) * q)] * 1000;
for (const [name, r] of Object.entries(results))
  console.log(`${name}: p50 ${at(r.times, 0.5).toFixed(0)} us, p99 ${at(r.times, 0.99).toFixed(0)} us, CPU ${(r.cpuUs / r.calls).toFixed(0)} us/call`);
for (const { client, core } of Object.values(sides)) {
  await client.close();
  await core.close();
}
