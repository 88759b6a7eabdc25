import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCodemuxConfig, startCodemux } from "@codemux/runtime";

// A config file as MCP clients write it: one filesystem server on this folder.
const dir = await mkdtemp(join(tmpdir(), "codemux-runtime-example-"));
const file = join(dir, "codemux.json");
await writeFile(file, JSON.stringify({ mcpServers: { fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] } } }));

// Read once and checked as a whole (a mistake names the file and the field), then started as `codemux exec` starts it.
const config = await loadCodemuxConfig({ configPath: file });
const { core } = await startCodemux(config, { level: "warn", cache: false });
await core.settled(); // every server connected or failed (bounded)
console.log(core.queries.status().map((server) => `${server.name}: ${server.state}`));

// What a model does first: search the catalog through the code-mode surface.
const found = await core.surface().callTool("search_tools", { query: "list a directory" }, { session: core.session(), origin: "cli" });
console.log(found.content[0]?.type === "text" ? found.content[0].text.split("\n")[0] : found);

await core.close(); // stops the servers and the plugins
