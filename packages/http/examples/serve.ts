import { CodemuxHttpServer } from "@codemux/http";
import { parseConfig } from "@codemux/pool";
import { Codemux } from "@codemux/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const config = parseConfig(
  JSON.stringify({
    mcpServers: { fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] } },
  }),
);
const core = new Codemux({ config });
core.start();
await core.ready(); // every server connected or failed (bounded), so the search below sees their tools

// One shared core, served over HTTP; port 0 picks a free port. Use a real secret (openssl rand -hex 32).
const token = "example-token-0123456789";
const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "laptop", token }] });
await http.listen();
const headers = { Authorization: `Bearer ${token}` };

// An MCP client over Streamable HTTP...
const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers } }));
console.log((await client.listTools()).tools.map((tool) => tool.name));
await client.close();

// ...and REST, as curl would: search, then call the best hit with its native arguments.
const search = await fetch(`${http.url}/v1/tools?q=list%20a%20directory&limit=3`, { headers });
const { tools } = (await search.json()) as { tools: Array<{ name: string }> };
console.log(tools[0]?.name);
const call = await fetch(`${http.url}/v1/tools/fs__list_directory/call`, {
  method: "POST",
  headers: { ...headers, "Content-Type": "application/json" },
  body: JSON.stringify({ path: "." }),
});
console.log(call.status);

await http.close(); // stops accepting, lets calls in flight finish, closes sessions
await core.close();
