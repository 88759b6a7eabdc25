import { parseConfig } from "@codemux/pool";
import { CLI_HINTS, Codemux, createSessionServer, searchCatalog } from "@codemux/server";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";

const config = parseConfig(
  JSON.stringify({
    mcpServers: { fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] } },
  }),
);
const core = new Codemux({ config }); // mode "code" (default) or "passthrough"
core.start(); // connects the servers in the background
await core.ready(); // optional: requests wait for servers still connecting, up to startupWaitMs

// Use it directly: the search and the snippet host the meta-tools use, answering with data.
const services = core.servicesFor(CLI_HINTS); // what meta-tools get, with answers' hints in the CLI's words
const found = await searchCatalog(services, { query: "read a file", limit: 3 });
console.log(found.hits.map((hit) => hit.entry.qualifiedName).join("\n"));
const run = await services.snippets.execute(
  `import { listDirectory } from "mcp/servers/fs/listDirectory";
  const { content } = await listDirectory({ path: "." }); // the server declares an outputSchema
  export default content.split("\\n").length;`,
  { session: core.session() },
);
console.log(run.ok ? run.result : run.error);

// ...or serve it: one SDK server per client session, over any transport
// (`serveStdio(core.sessions)` from "@codemux/server/stdio" serves stdin/stdout).
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await createSessionServer(core.sessions).connect(serverSide);
const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(clientSide);
console.log((await client.listTools()).tools.map((tool) => tool.name));

await client.close();
await core.close();
