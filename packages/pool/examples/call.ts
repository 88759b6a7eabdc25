import { ServerPool, parseConfig } from "@codemux/pool";

// Or `await loadConfigFile("./codemux.json")`: { "mcpServers": { ... } } or { "servers": { ... } }, JSON or JSONC,
// or one server at the top level ({ "command": ... } or { "url": ... }, named by "name" or after the file)
const config = parseConfig(
  JSON.stringify({
    mcpServers: { demo: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] } },
  }),
);
for (const warning of config.warnings ?? []) console.error(warning);
const pool = new ServerPool(config);
pool.on("state", (s) => console.error(s.name, s.state, s.error ?? ""));
void pool.start(); // resolves when every server is ready, failed or skipped; never rejects

if (await pool.waitFor("demo", 10_000)) {
  for (const { server, tools } of pool.tools()) console.log(server, tools.length);
  const result = await pool.callTool(
    "demo",
    "trigger-long-running-operation",
    { duration: 1, steps: 2 },
    {
      timeoutMs: 10_000,
      signal: AbortSignal.timeout(20_000),
      onprogress: (p) => console.error(`progress ${p.progress}/${p.total ?? "?"}`),
      annotations: { readOnlyHint: true }, // the tool's annotations: makes retries after sending safe
    },
  );
  console.log(result.content);
}
await pool.close(); // every server, in every state, with its whole process group
