// Call overhead of the plugin chain: `node bench/overhead.mjs` after `pnpm build` (figures in docs/perf/hooks.md).
import { parseConfig } from "@codemux/pool";
import { Codemux } from "@codemux/server";
import { misbehavingServerPath } from "@codemux/test-servers";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stderrLogger } from "@codemux/core";
import { auditPlugin, cachePlugin, pluginMiddleware } from "@codemux/hooks";

const dir = mkdtempSync(join(tmpdir(), "hooks-bench-"));
const session = { id: "bench", principal: "local" };
const input = (args) => ({
  name: "s__echo",
  server: "s",
  tool: "echo",
  definition: undefined,
  annotations: { readOnlyHint: true },
  arguments: args,
  origin: "call_tool",
  session,
  signal: undefined,
  state: new Map(),
});
const answer = { content: [{ type: "text", text: "hi" }] };

async function chainCost(label, plugins, varyArgs) {
  const host = pluginMiddleware(plugins, { logger: stderrLogger({ prefix: "hooks" }), dataDir: dir });
  await host.ready();
  const chain = host.host.chain;
  const n = 20_000;
  for (let i = 0; i < 2000; i++) await chain.run(input({ text: varyArgs ? `w${i}` : "same" }), async () => answer);
  const t = performance.now();
  for (let i = 0; i < n; i++) await chain.run(input({ text: varyArgs ? `x${i}` : "same" }), async () => answer);
  const us = ((performance.now() - t) * 1000) / n;
  console.log(`chain only, ${label}: ${us.toFixed(1)} µs/call`);
  await host.close();
}

async function endToEnd(label, middleware, same = false) {
  const config = parseConfig(JSON.stringify({ mcpServers: { s: { command: process.execPath, args: [misbehavingServerPath] } } }), { file: "bench" });
  const core = new Codemux({ config, mode: "passthrough", middleware });
  core.start();
  await core.ready();
  const call = (i) => core.callTool({ name: "s__echo", arguments: { text: same ? "same" : `t${i}` }, origin: "call_tool", session });
  for (let i = 0; i < 300; i++) await call(i);
  const samples = [];
  for (let i = 0; i < 2000; i++) {
    const t = performance.now();
    await call(i);
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  console.log(`codemux call_tool to a stdio server, ${label}: p50 ${samples[1000].toFixed(3)} ms, p95 ${samples[1900].toFixed(3)} ms`);
  await core.close();
  for (const m of middleware) await m.close?.();
}

await chainCost("no plugins", [], false);
await chainCost("one empty plugin", [{ name: "empty", beforeCall: () => undefined }], false);
await chainCost("audit + cache, misses", [auditPlugin({ file: join(dir, "a.jsonl") }), cachePlugin()], true);
await chainCost("audit + cache, hits", [auditPlugin({ file: join(dir, "b.jsonl") }), cachePlugin()], false);
await endToEnd("no middleware", []);
await endToEnd("empty plugin chain", [pluginMiddleware([], { dataDir: dir })]);
await endToEnd("audit + cache, echo not cached (every call goes to the server)", [
  pluginMiddleware([auditPlugin({ file: join(dir, "c.jsonl") }), cachePlugin()], { dataDir: dir }),
]);
await endToEnd(
  "audit + cache, echo listed and called with the same arguments (hits)",
  [pluginMiddleware([auditPlugin({ file: join(dir, "d.jsonl") }), cachePlugin({ tools: ["s__echo"] })], { dataDir: dir })],
  true,
);
