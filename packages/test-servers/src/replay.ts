#!/usr/bin/env node
/**
 * Serves a recorded `tools/list` result (a JSON array of tools) over stdio, so that benchmarks
 * and tests can attach real catalogs without the real servers. A call answers with its name and
 * arguments, after `--latency-ms` when given.
 *
 *   codemux-replay-server CATALOG.json [--latency-ms N]
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { readFile } from "node:fs/promises";
import { basename } from "node:path";

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: codemux-replay-server CATALOG.json [--latency-ms N]\n");
  process.exit(2);
}
const latencyIndex = rest.indexOf("--latency-ms");
const latencyMs = latencyIndex >= 0 ? Number(rest[latencyIndex + 1]) : 0;
const tools = JSON.parse(await readFile(file, "utf8")) as Tool[];
const names = new Set(tools.map((t) => t.name));

const server = new Server({ name: `replay-${basename(file, ".json")}`, version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (!names.has(request.params.name)) throw new Error(`unknown tool ${request.params.name}`);
  if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
  return { content: [{ type: "text", text: JSON.stringify({ tool: request.params.name, arguments: request.params.arguments ?? {} }) }] };
});
await server.connect(new StdioServerTransport());
