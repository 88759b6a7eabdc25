#!/usr/bin/env node
/**
 * A deliberately misbehaving MCP server for codemux's fault tests. Each tool is one way a
 * real server goes wrong: crash, hang, slow with progress, stdout noise, huge or error results,
 * a counter that shows a restart. Flags change how it starts (see `parseFlags`).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { flagReader } from "./flags";

interface Flags {
  exitAtStart: boolean;
  stderr: string | undefined;
  noiseAtStart: boolean;
  startDelayMs: number;
  http: number | undefined;
  name: string;
  /** What the server tells its client at initialize (`--instructions TEXT`). */
  instructions: string | undefined;
  /** `--resources`: one resource and one prompt, both lists changeable (the tool `change_lists`). */
  resources: boolean;
  /** What it does with a request that comes before `initialize` (`--before-initialize exit|silent`): rmcp-style exit, or ignore it. */
  beforeInitialize: "exit" | "silent" | undefined;
  /** A file to append `PID METHOD` to for every request (`--log FILE`): tests count processes and probes with it. */
  log: string | undefined;
  /** `--bad-annotations`: two more tools whose definitions break the schema (`readOnlyHint: "true"`, a title that is a number). */
  badAnnotations: boolean;
  /** A file to append `PID` to each time the process starts (`--starts FILE`): tests count starts of a server that never answers. */
  starts: string | undefined;
  /** `--exit-said TEXT`: with `--before-initialize exit`, the line written to stderr before exiting (rmcp says it expected initialize). */
  exitSaid: string | undefined;
}

function parseFlags(argv: string[]): Flags {
  const value = flagReader(argv);
  return {
    exitAtStart: argv.includes("--exit-at-start"),
    stderr: value("--stderr"),
    noiseAtStart: argv.includes("--noise-at-start"),
    startDelayMs: Number(value("--start-delay-ms") ?? 0),
    http: value("--http") === undefined ? undefined : Number(value("--http")),
    name: value("--name") ?? "misbehaving",
    instructions: value("--instructions"),
    resources: argv.includes("--resources"),
    beforeInitialize: value("--before-initialize") === "exit" ? "exit" : value("--before-initialize") === "silent" ? "silent" : undefined,
    log: value("--log"),
    badAnnotations: argv.includes("--bad-annotations"),
    starts: value("--starts"),
    exitSaid: value("--exit-said"),
  };
}

const changeLists: Tool = tool(
  "change_lists",
  "Send resources/list_changed, prompts/list_changed and resources/updated for test://note (with --resources).",
  {},
);

const baseTools: Tool[] = [
  tool("echo", "Return the text it is given.", { text: { type: "string", description: "Text to return." } }, ["text"]),
  tool(
    "slow",
    "Wait for ms milliseconds, reporting progress every step, then answer.",
    {
      ms: { type: "number", description: "How long to wait." },
      steps: { type: "number", description: "How many progress notifications to send." },
    },
    ["ms"],
  ),
  tool("hang", "Never answer (until cancelled).", {}),
  tool("crash", "Exit the process in the middle of the call.", { code: { type: "number" } }),
  tool("noise", "Print non-JSON lines on stdout, then answer.", { lines: { type: "number" } }),
  tool(
    "huge",
    "Return a text result of the given size in bytes.",
    { bytes: { type: "number" }, lines: { type: "boolean", description: "Numbered lines instead of one run of characters." } },
    ["bytes"],
  ),
  tool("fail", "Return an error result (isError).", { message: { type: "string" } }),
  tool("throw", "Answer with a JSON-RPC error.", { message: { type: "string" } }),
  tool("counter", "Count calls since this process started; also returns the pid.", {}),
  tool("cancellations", "Report the cancellations this server received: how many, and the request ids of calls still running when cancelled.", {}),
  tool("env", "Return the value of an environment variable of this process.", { name: { type: "string" } }, ["name"]),
  tool("add_tool", "Add a tool named `name` and send tools/list_changed.", { name: { type: "string" } }, ["name"]),
  tool("exit_after", "Answer, then exit after ms milliseconds.", { ms: { type: "number" } }),
  {
    ...tool("structured", "Return a structured result matching the output schema.", { n: { type: "number" } }, ["n"]),
    outputSchema: { type: "object", properties: { n: { type: "number" }, doubled: { type: "number" } }, required: ["n", "doubled"] },
  },
];

function tool(name: string, description: string, properties: Record<string, object>, required: string[] = []): Tool {
  return { name, description, inputSchema: { type: "object", properties, required } };
}

/** Every notifications/cancelled that arrived, also those for calls already answered (a proxy should send none of those). */
const cancelNotices = { count: 0 };

const text = (value: string, isError = false): CallToolResult => ({ content: [{ type: "text", text: value }], ...(isError ? { isError } : {}) });
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("cancelled"));
    });
  });

/** One tools/call as a tool's handler sees it: its arguments, the request and its `extra`, the server, its tool list and call counts. */
interface ToolCall {
  args: Record<string, unknown>;
  request: CallToolRequest;
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>;
  server: Server;
  tools: Tool[];
  state: { calls: number; cancelled: Array<string | number> };
}

/** Sleeps `ms` in `steps`, with a progress notification after each when the call asked for progress. */
async function slowTool({ args, request, extra }: ToolCall): Promise<CallToolResult> {
  const ms = Number(args.ms ?? 1000);
  const steps = Math.max(1, Number(args.steps ?? 5));
  const token = request.params._meta?.progressToken;
  for (let i = 1; i <= steps; i++) {
    await sleep(ms / steps, extra.signal);
    if (token !== undefined) {
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: steps } });
    }
  }
  return text(`slept ${ms} ms`);
}

/** `bytes` characters of x, or as many numbered lines with `lines`. */
function hugeTool({ args }: ToolCall): CallToolResult {
  const bytes = Number(args.bytes);
  if (!args.lines) return text("x".repeat(bytes));
  const lines: string[] = [];
  let size = 0;
  for (let i = 1; size < bytes; i++) {
    const line = `line ${i}: ${"x".repeat(60)}`;
    lines.push(line);
    size += line.length + 1;
  }
  return text(lines.join("\n"));
}

/** Each tool's behaviour, by name (also those not listed without their flag). */
const HANDLERS: Record<string, (call: ToolCall) => CallToolResult | Promise<CallToolResult>> = {
  echo: ({ args }) => text(String(args.text)),
  slow: slowTool,
  hang: async ({ extra }) => {
    await sleep(2 ** 30, extra.signal);
    return text("unreachable");
  },
  crash: ({ args }) => process.exit(Number(args.code ?? 1)),
  noise: ({ args }) => {
    for (let i = 0; i < Number(args.lines ?? 3); i++) process.stdout.write(`this is not JSON-RPC ${i}\n`);
    return text("noisy but fine");
  },
  huge: hugeTool,
  fail: ({ args }) => text(String(args.message ?? "the tool failed"), true),
  throw: ({ args }) => {
    throw new Error(String(args.message ?? "the tool threw"));
  },
  counter: ({ state }) => text(JSON.stringify({ calls: state.calls, pid: process.pid })),
  cancellations: ({ state }) => text(JSON.stringify({ count: state.cancelled.length, requestIds: state.cancelled, notices: cancelNotices.count })),
  env: ({ args }) => text(JSON.stringify({ value: process.env[String(args.name)] ?? null })),
  change_lists: async ({ server }) => {
    // What a server does when its resources and prompts change, and a resource it serves was updated.
    await server.sendResourceListChanged();
    await server.sendPromptListChanged();
    await server.sendResourceUpdated({ uri: "test://note" });
    return text("changed");
  },
  add_tool: async ({ args, server, tools }) => {
    tools.push(tool(String(args.name), `A tool added at run time: ${String(args.name)}.`, {}));
    await server.sendToolListChanged();
    return text(`added ${String(args.name)}`);
  },
  exit_after: ({ args }) => {
    setTimeout(() => process.exit(0), Number(args.ms ?? 50));
    return text("exiting soon");
  },
  structured: ({ args }) => {
    const n = Number(args.n);
    return { content: [{ type: "text", text: JSON.stringify({ n, doubled: n * 2 }) }], structuredContent: { n, doubled: n * 2 } };
  },
};

function createMisbehavingServer(flags: Flags): Server {
  const tools = [...baseTools];
  if (flags.badAnnotations)
    tools.push(
      { ...tool("string_hint", "Its readOnlyHint is a string.", {}), annotations: { readOnlyHint: "true", destructiveHint: false } as never },
      { ...tool("number_title", "Its title is a number.", {}), title: 42 as never },
    );
  // What a cancellation test needs to see: that notifications/cancelled reached the server, for which calls.
  const state = { calls: 0, cancelled: [] as Array<string | number> };
  const server = new Server(
    { name: flags.name, version: "1.0.0" },
    {
      capabilities: {
        tools: { listChanged: true },
        ...(flags.resources ? { resources: { listChanged: true, subscribe: true }, prompts: { listChanged: true } } : {}),
      },
      ...(flags.instructions ? { instructions: flags.instructions } : {}),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: flags.resources ? [...tools, changeLists] : tools }));
  if (flags.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [{ uri: "test://note", name: "note" }] }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({ contents: [{ uri: request.params.uri, text: "a note" }] }));
    server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
    server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [{ name: "greet" }] }));
  }
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    state.calls += 1;
    extra.signal.addEventListener("abort", () => state.cancelled.push(extra.requestId), { once: true });
    const name = request.params.name;
    const handler = Object.hasOwn(HANDLERS, name) ? HANDLERS[name] : undefined;
    if (handler) return handler({ args, request, extra, server, tools, state });
    if (tools.some((t) => t.name === name)) return text(`called ${name}`);
    throw new Error(`unknown tool ${name}`);
  });
  return server;
}

/** Streamable HTTP with sessions; `DELETE /sessions` forgets them all, as a restarted server would. */
async function serveHttp(flags: Flags, port: number): Promise<void> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === "/sessions" && req.method === "DELETE") {
      for (const t of transports.values()) await t.close();
      transports.clear();
      res.writeHead(204).end();
      return;
    }
    if (!req.url?.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const headerKey = process.env.MISBEHAVING_REQUIRE_HEADER;
    if (headerKey && req.headers[headerKey.toLowerCase()] === undefined) {
      res.writeHead(401).end("missing header");
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (typeof sessionId === "string") {
        res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      transport = created;
      await createMisbehavingServer(flags).connect(created);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  const address = http.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : port}\n`);
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.starts) appendFileSync(flags.starts, `${process.pid}\n`);
  if (flags.stderr) process.stderr.write(`${flags.stderr}\n`);
  if (flags.exitAtStart) process.exit(3);
  if (flags.noiseAtStart) process.stdout.write("starting up... (not JSON)\n");
  if (flags.startDelayMs) await sleep(flags.startDelayMs);
  if (flags.http !== undefined) return serveHttp(flags, flags.http);
  const transport = new StdioServerTransport();
  await createMisbehavingServer(flags).connect(transport);
  // Like a well-behaved server, it ends with its client: a slow call in progress (up to minutes) would otherwise outlive the test that made it.
  process.stdin.once("end", () => process.exit(0));
  const receive = transport.onmessage;
  let initialized = false;
  transport.onmessage = (message) => {
    const method = "method" in message ? message.method : undefined;
    if (flags.log) appendFileSync(flags.log, `${process.pid} ${method ?? "response"}\n`);
    if (method === "initialize") initialized = true;
    else if (!initialized && method !== undefined && "id" in message) {
      if (flags.beforeInitialize === "exit") {
        if (flags.exitSaid) process.stderr.write(`${flags.exitSaid}\n`, () => process.exit(2));
        else process.exit(2);
        return;
      }
      if (flags.beforeInitialize === "silent") return;
    }
    if (method === "notifications/cancelled") cancelNotices.count++;
    receive?.(message);
  };
}

await main();
