#!/usr/bin/env node
/**
 * Serves a recorded `tools/list` result (a JSON array of tools) over stdio, so that benchmarks
 * and tests can attach real catalogs without the real servers. A call answers with its name and
 * arguments, after `--latency-ms` when given. With `--watch`, an edit of the file is listed afresh and
 * announced with tools/list_changed (a server that changes its tools mid-run); `--instructions TEXT` is
 * what it tells its client at initialize.
 *
 *   codemux-replay-server CATALOG.json [--latency-ms N] [--watch] [--instructions TEXT]
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { watch } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename } from "node:path";

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: codemux-replay-server CATALOG.json [--latency-ms N]\n");
  process.exit(2);
}
const latencyIndex = rest.indexOf("--latency-ms");
const latencyMs = latencyIndex >= 0 ? Number(rest[latencyIndex + 1]) : 0;
const watching = rest.includes("--watch");
const instructionsIndex = rest.indexOf("--instructions");
const instructions = instructionsIndex >= 0 ? rest[instructionsIndex + 1] : undefined;
let last = await readFile(file, "utf8");
let tools = JSON.parse(last) as Tool[];
let names = new Set(tools.map((t) => t.name));

const server = new Server(
  { name: `replay-${basename(file, ".json")}`, version: "1.0.0" },
  { capabilities: { tools: watching ? { listChanged: true } : {} }, ...(instructions ? { instructions } : {}) },
);
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (!names.has(request.params.name)) throw new Error(`unknown tool ${request.params.name}`);
  if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
  return { content: [{ type: "text", text: JSON.stringify({ tool: request.params.name, arguments: request.params.arguments ?? {} }) }] };
});
await server.connect(new StdioServerTransport());
if (watching) {
  watch(file, async () => {
    let text: string;
    try {
      text = await readFile(file, "utf8");
      tools = JSON.parse(text) as Tool[];
    } catch {
      return; // a write under way: the next event reads it whole
    }
    if (text === last) return;
    last = text;
    names = new Set(tools.map((t) => t.name));
    await server.sendToolListChanged();
  }).unref();
}
