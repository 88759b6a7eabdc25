#!/usr/bin/env node
/**
 * An MCP server on SDK v2's `McpServer` over Streamable HTTP (`--http PORT`, 0 for a free one; it prints `listening PORT`)
 * whose `route` tool marks parameters with `x-mcp-header` (SEP-2243): the SDK's handler refuses a 2026-07-28 call whose
 * `Mcp-Param-*` headers are missing or disagree with the arguments (400, -32020), so a call that succeeds proves the
 * client mirrored them. `--log FILE` appends each call's `Mcp-Param-*` headers as one JSON line. With `--marked-later`,
 * `route` marks none until its `mark_route` tool is called (a tool that changed since the client listed it, unannounced).
 */
import { createMcpHandler, fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { appendFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { flagReader } from "./flags";

const flag = flagReader(process.argv.slice(2));
const logFile = flag("--log");
let marked = !process.argv.includes("--marked-later");

interface RouteInput {
  region: string;
  priority?: number;
  verbose?: boolean;
  query: string;
}

const markedSchema = {
  type: "object",
  properties: {
    region: { type: "string", description: "Where the query runs.", "x-mcp-header": "Region" },
    priority: { type: "integer", description: "Its priority.", "x-mcp-header": "Priority" },
    verbose: { type: "boolean", description: "Say more.", "x-mcp-header": "Verbose" },
    query: { type: "string", description: "What to run (not mirrored)." },
  },
  required: ["region", "query"],
} as const;

/** The schema without its x-mcp-header annotations. */
const unmarkedSchema = JSON.parse(JSON.stringify(markedSchema).replaceAll(/,"x-mcp-header":"\w+"/g, "")) as typeof markedSchema;

function makeServer(): McpServer {
  const server = new McpServer({ name: "param-headers", version: "1.0.0" });
  server.registerTool(
    "route",
    {
      description: "Runs a query in a region; the region, priority and verbosity travel as Mcp-Param headers too.",
      inputSchema: fromJsonSchema<RouteInput>(marked ? markedSchema : unmarkedSchema),
    },
    async ({ region, priority, verbose, query }) => ({
      content: [{ type: "text", text: `routed ${query} to ${region}${priority === undefined ? "" : ` at ${priority}`}${verbose ? " verbosely" : ""}` }],
    }),
  );
  server.registerTool("mark_route", { description: "From now on route's parameters are marked with x-mcp-header." }, async () => {
    marked = true;
    return { content: [{ type: "text", text: "marked" }] };
  });
  return server;
}

const handler = createMcpHandler(makeServer);
const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
  if (logFile && headers.get("mcp-method") === "tools/call") {
    const params = Object.fromEntries([...headers].filter(([key]) => key.startsWith("mcp-param-")));
    appendFileSync(logFile, `${JSON.stringify(params)}\n`);
  }
  const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: req.method, headers, ...(body.length ? { body } : {}) });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) Readable.fromWeb(response.body as never).pipe(res);
  else res.end();
});
const port = Number(flag("--http") ?? 0);
http.listen(port, "127.0.0.1", () => {
  const address = http.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : port}\n`);
});
