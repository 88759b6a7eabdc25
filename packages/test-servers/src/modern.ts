#!/usr/bin/env node
/**
 * An MCP server of the 2026-07-28 era on SDK v2, for codemux's downstream era tests. Over stdio
 * (`serveStdio`) or Streamable HTTP (`--http PORT`, `createMcpHandler`); `--legacy reject` refuses
 * 2025 openings (modern-only), `--legacy serve` (the default) serves both eras. `--log FILE` appends
 * `PID METHOD` for every request it receives (and `PID listen-resources [URIS]` after a listen), so a test can count
 * processes and probes. `slow` reports progress, `throw` and `fail_rpc` fail, `hang` waits for its cancellation. Its `ask`,
 * `sample`, `roots` and `ask_rounds` tools ask their client the 2026 way (`input_required`, then the retry).
 * `--list-changed` declares list changes (tools, resources, prompts) and resource subscriptions: `add_tool`,
 * `add_resource` and `update_resource` then tell the listen streams. `--ask-beyond-tools` declares
 * prompts and resources too: the prompt `ask` and the resources `ask://<message>` ask their client the
 * 2026 way before they answer, as its `ask` tool does.
 */
import {
  createMcpHandler,
  inputRequired,
  ProtocolError,
  Server,
  type CallToolResult,
  type Resource,
  type ServerCapabilities,
  type ServerContext,
  type Tool,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { appendFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { flagReader } from "./flags";

interface Flags {
  legacy: "serve" | "reject";
  http: number | undefined;
  name: string;
  log: string | undefined;
  /** The `ttlMs` of its `tools/list` results (`--ttl-ms N`); none when absent. */
  ttlMs: number | undefined;
  /** Instructions of this many characters (`--instructions-chars N`), for tests of bounds; a short sentence when absent. */
  instructionsChars: number | undefined;
  /** Over HTTP, wait this long before answering each request (`--delay-ms N`): a slow server, not a silent one; over stdio, before reading stdin at all (a slow start). */
  delayMs: number;
  /** Declares listChanged for tools, resources and prompts, and publishes each change it makes (`--list-changed`). */
  listChanged: boolean;
  /** Declares resource subscriptions and no list changes (`--subscribe-only`): a listen stream then serves only subscriptions. */
  subscribeOnly: boolean;
  /** Listen streams it accepts at once (`--max-listens N`, 0 refuses every one); the SDK's 1024 when absent. */
  maxListens: number | undefined;
  /** Declares prompts and resources that ask their client (`--ask-beyond-tools`): the prompt `ask`, the resources `ask://<message>`. */
  askBeyondTools: boolean;
}

function parseFlags(argv: string[]): Flags {
  const value = flagReader(argv);
  return {
    legacy: value("--legacy") === "reject" ? "reject" : "serve",
    http: value("--http") === undefined ? undefined : Number(value("--http")),
    name: value("--name") ?? "modern",
    log: value("--log"),
    ttlMs: value("--ttl-ms") === undefined ? undefined : Number(value("--ttl-ms")),
    instructionsChars: value("--instructions-chars") === undefined ? undefined : Number(value("--instructions-chars")),
    delayMs: Number(value("--delay-ms") ?? 0),
    listChanged: argv.includes("--list-changed"),
    subscribeOnly: argv.includes("--subscribe-only"),
    maxListens: value("--max-listens") === undefined ? undefined : Number(value("--max-listens")),
    askBeyondTools: argv.includes("--ask-beyond-tools"),
  };
}

const flags = parseFlags(process.argv.slice(2));
const log = (method: string) => {
  if (flags.log) appendFileSync(flags.log, `${process.pid} ${method}\n`);
};
/** Logs a received message's method; for a listen, also the resources its filter names (`PID listen-resources ["uri"]`). */
const logMessage = (message: { method?: string; params?: { notifications?: { resourceSubscriptions?: string[] } } } | undefined, fallback: string) => {
  log(message?.method ?? fallback);
  if (message?.method === "subscriptions/listen") log(`listen-resources ${JSON.stringify(message.params?.notifications?.resourceSubscriptions ?? [])}`);
};

/** Resolves after `ms`, or rejects as soon as `signal` aborts. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new Error("cancelled"));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(new Error("cancelled"))), { once: true });
  });

/** The `hang` calls waiting now, and those their client cancelled. */
const hangs = { waiting: 0, cancelled: 0 };

const tools: Tool[] = [
  { name: "echo", description: "Return the text it is given.", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
  {
    name: "huge",
    description: "Return a text result of the given size in bytes (at most 10 MB).",
    inputSchema: { type: "object", properties: { bytes: { type: "number" } }, required: ["bytes"] },
  },
  { name: "whoami", description: "Report the era and the client capabilities this request carried.", inputSchema: { type: "object", properties: {} } },
  { name: "counter", description: "Count calls since this process started; also returns the pid.", inputSchema: { type: "object", properties: {} } },
  { name: "crash", description: "Exit the process in the middle of the call.", inputSchema: { type: "object", properties: {} } },
  { name: "hang", description: "Answer only when cancelled (the request's signal aborts).", inputSchema: { type: "object", properties: {} } },
  {
    name: "slow",
    description: "Sleep `ms` (default 1000) in `steps` (default 5), with a progress notification after each; answer `slept MS ms`.",
    inputSchema: { type: "object", properties: { ms: { type: "number" }, steps: { type: "number" } } },
  },
  { name: "throw", description: "Fail with a thrown Error of `message`.", inputSchema: { type: "object", properties: { message: { type: "string" } } } },
  {
    name: "fail_rpc",
    description: "Fail with a JSON-RPC error of `code`, `message` and `data`.",
    inputSchema: { type: "object", properties: { code: { type: "number" }, message: { type: "string" }, data: {} } },
  },
  {
    name: "hanging",
    description: "How many `hang` calls wait now, and how many were cancelled since the process started.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "ask",
    description: "Ask the client's user (input_required with elicitation/create); answer with what the retry carried.",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
  {
    name: "ask_url",
    description: "Ask the client's user to visit a URL (input_required with a URL-mode elicitation/create, no elicitationId as in 2026-07-28).",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
  {
    name: "sample",
    description: "Ask the client's model (input_required with sampling/createMessage); answer with its text.",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
  {
    name: "roots",
    description: "Ask for the client's roots (input_required with roots/list); answer with them.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "ask_rounds",
    description: "Ask `rounds` questions one round at a time (each retry's state names the next); answer with every answer.",
    inputSchema: { type: "object", properties: { rounds: { type: "number" } } },
  },
  {
    name: "add_tool",
    description: "Add a tool named `name` (notified only with --list-changed).",
    inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  },
  ...(flags.listChanged
    ? [
        {
          name: "end_listens",
          description: "Over HTTP, cut the open listen streams (as a dropped network would).",
          inputSchema: { type: "object" as const, properties: {} },
        },
        {
          name: "update_resource",
          description: "Tell the listen streams subscribed to `uri` that it changed.",
          inputSchema: { type: "object" as const, properties: { uri: { type: "string" } }, required: ["uri"] },
        },
        {
          name: "add_resource",
          description: "Add a resource at `uri` and tell the listen streams.",
          inputSchema: { type: "object" as const, properties: { uri: { type: "string" } }, required: ["uri"] },
        },
      ]
    : []),
];
const resources: Resource[] = [];
/** The responses of the open listen requests (HTTP), for `end_listens`. */
const listens = new Set<ServerResponse>();
/** Over HTTP, the handler's bus (per-request servers cannot push); over stdio, the connection's one server. */
let notify: (change: "tools" | "resources" | { uri: string }, server: Server) => void = (change, server) =>
  void (change === "tools" ? server.sendToolListChanged() : change === "resources" ? server.sendResourceListChanged() : server.sendResourceUpdated(change));
let calls = 0;

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
const isAnswer = (result: CallToolResult | ReturnType<typeof inputRequired>): result is CallToolResult => result.resultType !== "input_required";
const textOf = (result: CallToolResult): string => result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

function capabilitiesOf(flags: Flags): ServerCapabilities {
  if (flags.askBeyondTools) return { tools: {}, prompts: {}, resources: {} };
  if (flags.listChanged) return { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true }, prompts: { listChanged: true } };
  return flags.subscribeOnly ? { tools: {}, resources: { subscribe: true } } : { tools: {} };
}

function makeServer(era: string): Server {
  const server = new Server(
    { name: flags.name, version: "2.0.0" },
    {
      capabilities: capabilitiesOf(flags),
      instructions: flags.instructionsChars === undefined ? `${flags.name} speaks 2026-07-28.` : "i".repeat(flags.instructionsChars),
      ...(flags.ttlMs === undefined ? {} : { cacheHints: { "tools/list": { ttlMs: flags.ttlMs, cacheScope: "public" } } }),
    },
  );
  server.setRequestHandler("tools/list", async () => ({ tools }));
  if (flags.listChanged) {
    server.setRequestHandler("resources/list", async () => ({ resources }));
    server.setRequestHandler("prompts/list", async () => ({ prompts: [] }));
  }
  if (flags.askBeyondTools) {
    server.setRequestHandler("prompts/list", async () => ({
      prompts: [{ name: "ask", description: "Asks the client `message` first.", arguments: [{ name: "message" }] }],
    }));
    server.setRequestHandler("prompts/get", async (request, ctx) => {
      const answered = asked("ask", request.params.arguments?.message ?? "a question", ctx);
      if (!isAnswer(answered)) return answered;
      return { messages: [{ role: "user" as const, content: { type: "text" as const, text: textOf(answered) } }] };
    });
    server.setRequestHandler("resources/list", async () => ({ resources: [] }));
    server.setRequestHandler("resources/templates/list", async () => ({ resourceTemplates: [{ uriTemplate: "ask://{message}", name: "ask" }] }));
    server.setRequestHandler("resources/read", async (request, ctx) => {
      const { uri } = request.params;
      const answered = asked("ask", decodeURIComponent(uri.slice("ask://".length)), ctx);
      if (!isAnswer(answered)) return answered;
      return { contents: [{ uri, mimeType: "text/plain", text: textOf(answered) }] };
    });
  }
  server.setRequestHandler("tools/call", async (request, ctx: ServerContext) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    calls += 1;
    switch (request.params.name) {
      case "echo":
        return text(String(args.text));
      case "huge":
        return text("x".repeat(Math.max(0, Math.min(Number(args.bytes) || 0, 10_000_000))));
      case "whoami":
        return text(
          JSON.stringify({
            era,
            protocolVersion: server.getNegotiatedProtocolVersion() ?? null,
            clientCapabilities: (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.["io.modelcontextprotocol/clientCapabilities"] ?? null,
            metaKeys: Object.keys(request.params._meta ?? {}),
            progressToken: request.params._meta?.progressToken ?? null,
            traceparent: request.params._meta?.traceparent ?? null,
          }),
        );
      case "counter":
        return text(JSON.stringify({ calls, pid: process.pid }));
      case "crash":
        return process.exit(1);
      case "hang": {
        hangs.waiting++;
        const signal = ctx.mcpReq.signal;
        await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
        hangs.waiting--;
        hangs.cancelled++;
        return text("cancelled");
      }
      case "hanging":
        return text(JSON.stringify(hangs));
      case "slow": {
        const ms = Number(args.ms ?? 1000);
        const steps = Math.max(1, Number(args.steps ?? 5));
        const token = request.params._meta?.progressToken;
        for (let i = 1; i <= steps; i++) {
          await sleep(ms / steps, ctx.mcpReq.signal);
          if (token !== undefined) await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: i, total: steps } });
        }
        return text(`slept ${ms} ms`);
      }
      case "throw":
        throw new Error(String(args.message ?? "the tool threw"));
      case "fail_rpc":
        throw new ProtocolError(Number(args.code ?? -32000), String(args.message ?? "failed"), args.data);
      case "ask":
      case "ask_url":
      case "sample":
      case "roots":
        return asked(request.params.name, String(args.message ?? "a question"), ctx);
      case "ask_rounds":
        return askRounds(Number(args.rounds ?? 2), ctx);
      case "add_tool":
        tools.push({ name: String(args.name), description: `Added at run time: ${String(args.name)}.`, inputSchema: { type: "object", properties: {} } });
        if (flags.listChanged) notify("tools", server);
        return text(`added ${String(args.name)}`);
      case "end_listens":
        for (const res of listens) res.destroy();
        return text(`ended ${listens.size}`);
      case "update_resource":
        notify({ uri: String(args.uri) }, server);
        return text(`updated ${String(args.uri)}`);
      case "add_resource":
        resources.push({ uri: String(args.uri), name: String(args.uri) });
        notify("resources", server);
        return text(`added ${String(args.uri)}`);
      default:
        throw new ProtocolError(-32602, `Unknown tool: ${request.params.name}`);
    }
  });
  return server;
}

const answerSchema = { type: "object" as const, properties: { answer: { type: "string" as const } } };

/** The question of `tool` (one round): asked with state naming it, answered once the retry carries its answer and that state. */
function asked(tool: string, message: string, ctx: ServerContext): CallToolResult | ReturnType<typeof inputRequired> {
  const state = `${tool}:${message}`;
  const answer = ctx.mcpReq.inputResponses?.q;
  if (answer !== undefined && ctx.mcpReq.requestState() === state) return text(JSON.stringify({ asked: message, answer }));
  const question =
    tool === "ask"
      ? inputRequired.elicit({ message, requestedSchema: answerSchema })
      : tool === "ask_url"
        ? inputRequired.elicitUrl({ message, url: "https://auth.example.com/consent" })
        : tool === "sample"
          ? inputRequired.createMessage({ messages: [{ role: "user", content: { type: "text", text: message } }], maxTokens: 100 })
          : inputRequired.listRoots();
  return inputRequired({ inputRequests: { q: question }, requestState: state });
}

/** `rounds` questions, one a round: the state counts the answers so far (a test server trusts its own state). */
function askRounds(rounds: number, ctx: ServerContext): CallToolResult | ReturnType<typeof inputRequired> {
  const previous = ctx.mcpReq.requestState() as string | undefined;
  const answers: unknown[] = previous ? (JSON.parse(previous) as unknown[]) : [];
  const answer = ctx.mcpReq.inputResponses?.q;
  if (answer !== undefined) answers.push(answer);
  if (answers.length >= rounds) return text(JSON.stringify(answers));
  return inputRequired({
    inputRequests: { q: inputRequired.elicit({ message: `question ${answers.length + 1} of ${rounds}`, requestedSchema: answerSchema }) },
    requestState: JSON.stringify(answers),
  });
}

async function serveHttp(port: number): Promise<void> {
  const handler = createMcpHandler((ctx) => makeServer(ctx.era), { legacy: flags.legacy === "reject" ? "reject" : "stateless" });
  notify = (change) =>
    change === "tools"
      ? handler.notify.toolsChanged()
      : change === "resources"
        ? handler.notify.resourcesChanged()
        : handler.notify.resourceUpdated(change.uri);
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const message = body.length ? (JSON.parse(body.toString("utf8")) as Parameters<typeof logMessage>[0]) : undefined;
    const method = message?.method;
    logMessage(message, req.method ?? "-");
    if (method === "tools/call") log(`traceparent-header ${req.headers.traceparent ?? "-"}`);
    if (method === "subscriptions/listen") {
      listens.add(res);
      res.once("close", () => {
        listens.delete(res);
        log("listen-closed");
      });
    }
    if (flags.delayMs) await new Promise((resolve) => setTimeout(resolve, flags.delayMs));
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
    const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: req.method, headers, ...(body.length ? { body } : {}) });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) Readable.fromWeb(response.body as never).pipe(res);
    else res.end();
  });
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  const address = http.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : port}\n`);
}

if (flags.http !== undefined) await serveHttp(flags.http);
else {
  if (flags.delayMs) await new Promise((resolve) => setTimeout(resolve, flags.delayMs));
  // A second reader of stdin sees the same lines as the SDK's: the log only.
  let rest = "";
  process.stdin.on("data", (chunk: Buffer) => {
    const lines = (rest + chunk.toString("utf8")).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) logMessage(JSON.parse(line) as Parameters<typeof logMessage>[0], "response");
  });
  serveStdio((ctx) => makeServer(ctx.era), { legacy: flags.legacy, ...(flags.maxListens === undefined ? {} : { maxSubscriptions: flags.maxListens }) });
  process.stdin.once("end", () => process.exit(0));
}
