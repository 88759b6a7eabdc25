// wrapWithProxy on a plain SDK server: run with `node examples/wrap-server.mjs` after `pnpm build`.
import { auditPlugin, cachePlugin, redactPlugin, wrapWithProxy } from "@codemux/hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

const server = new McpServer({ name: "billing", version: "1.0.0" });
let lookups = 0;

// Registered before wrapping: wrapped all the same.
server.registerTool(
  "get_invoice",
  { description: "Read one invoice.", inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } },
  async ({ id }) => ({ content: [{ type: "text", text: `invoice ${id}: 42 EUR (lookup ${++lookups}), api key sk-live0123456789abcdefghij` }] }),
);

const auditFile = join(mkdtempSync(join(tmpdir(), "billing-")), "audit.jsonl");
await wrapWithProxy(server, { plugins: [auditPlugin({ file: auditFile }), redactPlugin(), cachePlugin({ ttlMs: 30_000 })] });

// Registered after wrapping: wrapped too.
server.registerTool("ping", { description: "Answer pong." }, async () => ({ content: [{ type: "text", text: "pong" }] }));

// Any transport works; an in-memory pair keeps the example self-contained.
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(clientSide);

for (const call of [
  { name: "get_invoice", arguments: { id: "7" } },
  { name: "get_invoice", arguments: { id: "7" } },
  { name: "ping", arguments: {} },
]) {
  const result = await client.callTool(call);
  console.log(`${call.name}: ${result.content[0].text}${result._meta?.["codemux/cache"] ? " (cached)" : ""}`);
}
await client.close();
await server.close(); // also closes the plugins (the audit log is flushed)
console.log(`audit lines: ${readFileSync(auditFile, "utf8").trim().split("\n").length}`);
