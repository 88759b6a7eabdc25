#!/usr/bin/env node
/**
 * An MCP server for codemux's isolation tests: it asks its client questions (elicitation, roots,
 * sampling) during a call or late, after the call that caused them ended; it logs during a call or
 * late; it keeps values in its process; it answers with exactly the result or JSON-RPC error it is
 * given; and it serves text resources whose contents are in their URIs (base64url). `--scheme NAME`
 * names its resource URIs' scheme (default `asking`), `--instructions TEXT` what it says at initialize. The
 * prompt `recall` and the completions of other prompts answer what it was asked to remember (a test
 * chooses what they carry; completing the value `fail` answers an error quoting it). The prompt `ask`, the resources
 * `<scheme>://ask/<message>` and the completions of the prompt's argument ask too. Over stdio, or
 * Streamable HTTP with sessions (`--http PORT`), where a question asked during a request goes on that
 * request's own stream (as the SDKs send it), unless a call asks with `stream: "standalone"`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
  type CallToolRequest,
  type CallToolResult,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { flagReader } from "./flags";

const flag = flagReader(process.argv.slice(2));
const scheme = flag("--scheme") ?? "asking";
const httpPort = flag("--http");
const instructions = flag("--instructions");

const tool = (name: string, description: string, properties: Record<string, object> = {}): Tool => ({
  name,
  description,
  inputSchema: { type: "object", properties },
});
const when = {
  type: "string",
  enum: ["now", "next-call", "after-answer"],
  description: "now: during this call; next-call: when the next call starts; after-answer: delayMs after answering",
};

const tools: Tool[] = [
  tool("ask", "Ask the client a question (elicitation): now, when the next call starts, or after answering.", {
    message: { type: "string" },
    when,
    delayMs: { type: "number" },
    thenMs: { type: "number", description: "now: how long to work after the answer before answering the call" },
    stream: { type: "string", enum: ["call", "standalone"], description: "over HTTP, now: on the call's own stream (default) or the session's standalone one" },
  }),
  tool("log", "Send a log line (notifications/message): now, when the next call starts, or after answering.", {
    data: { type: "string" },
    when,
    delayMs: { type: "number" },
  }),
  tool("sample", "Ask the client's model (sampling/createMessage) now, and return its answer's text.", { message: { type: "string" } }),
  tool("progress", "Report progress with this message (when the call asked for progress), then answer.", { message: { type: "string" } }),
  tool("remember", "Keep a value in this process (state that lives as long as the server does).", { value: { type: "string" } }),
  tool("recall", "The values this process was asked to remember, in order."),
  tool("roots", "Ask the client for its roots now, and return them."),
  tool("roots_seen", "The roots this server got after each roots/list_changed it was sent, once all those asks are answered."),
  tool("late", "What became of the questions asked late: each one's message and answer, or the error."),
  tool("slow", "Answer after ms milliseconds.", { ms: { type: "number" } }),
  tool("hold", "Answer once `release` is called with the same key.", { key: { type: "string" } }),
  tool("release", "Let the calls holding `key` answer; how many there were.", { key: { type: "string" } }),
  tool("inflight", "How many tool calls this process is answering now, this one included."),
  tool("result", "Answer with exactly this result (content, structuredContent, _meta, isError).", { result: { type: "object" } }),
  tool("throw", "Answer with a JSON-RPC error of this message and data.", { message: { type: "string" }, data: {} }),
  tool("hang", "Answer only when cancelled (notifications/cancelled, or the stream closed); with a progress token, report progress `hanging` first."),
  tool("hanging", "How many `hang` calls wait now, and how many were cancelled since the process started."),
];

/** Work deferred to the start of the next tool call (`when: "next-call"`). */
const onNextCall: Array<() => void> = [];
const late: Array<{ message: string; answer?: unknown; error?: string }> = [];
const rootsAsks: Array<Promise<unknown>> = [];
const remembered: string[] = [];
/** The calls of `hold` waiting for their key's `release`. */
const held = new Map<string, Array<() => void>>();

const text = (value: string, isError = false): CallToolResult => ({ content: [{ type: "text", text: value }], ...(isError ? { isError } : {}) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Asks the client; with `request`, on that request's own stream (where HTTP carries it; stdio has one stream). */
function elicit(server: Server, message: string, request?: RequestId): Promise<unknown> {
  return server.elicitInput(
    { message, requestedSchema: { type: "object", properties: { answer: { type: "string" } } } },
    request === undefined ? undefined : { relatedRequestId: request },
  );
}

function log(server: Server, data: string): Promise<void> {
  return server.notification({ method: "notifications/message", params: { level: "info", logger: "asking", data } });
}

/** Runs `work` now (awaited), at the next call's start, or `delayMs` after this call is answered. */
async function schedule(whenToRun: unknown, delayMs: unknown, work: () => Promise<void>): Promise<string> {
  if (whenToRun === "next-call") {
    onNextCall.push(() => void work());
    return "scheduled for the next call";
  }
  if (whenToRun === "after-answer") {
    setTimeout(() => void work(), Number(delayMs ?? 100));
    return "scheduled after the answer";
  }
  await work();
  return "done";
}

let inflight = 0;
/** The `hang` calls waiting now, and those their client cancelled. */
const hangs = { waiting: 0, cancelled: 0 };

/** Waits until `signal` aborts (the call was cancelled), counting it. */
async function hang(signal: AbortSignal): Promise<CallToolResult> {
  hangs.waiting++;
  await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
  hangs.waiting--;
  hangs.cancelled++;
  return text("cancelled");
}

/** One server (stdio has one; HTTP one per session), sharing this process's state. */
function createAskingServer(): Server {
  const server = new Server(
    { name: "asking", version: "1.0.0" },
    { capabilities: { tools: {}, logging: {}, resources: {}, prompts: {}, completions: {} }, ...(instructions ? { instructions } : {}) },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(server, request, extra));
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    rootsAsks.push(
      server.listRoots().then(
        (r) => r.roots,
        (error) => ({ error: errorText(error) }),
      ),
    );
  });
  // `recall` is made of this process's state: whoever gets it sees what was remembered here. `ask` asks its client first.
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [
      { name: "recall", description: "What this process was asked to remember." },
      { name: "ask", description: "Asks the client `message`, then says what it answered.", arguments: [{ name: "message" }] },
    ],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const asked = request.params.name === "ask" ? await elicit(server, request.params.arguments?.message ?? "a question", extra.requestId) : remembered;
    return { messages: [{ role: "user", content: { type: "text", text: JSON.stringify(asked) } }] };
  });
  // Completing the `ask` prompt's argument asks the client what to offer; other completions offer what was remembered.
  server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
    const { ref, argument } = request.params;
    if (ref.type === "ref/prompt" && ref.name === "ask")
      return { completion: { values: [JSON.stringify(await elicit(server, `complete ${argument.value}`, extra.requestId))] } };
    if (argument.value === "fail") throw new McpError(ErrorCode.InvalidParams, `cannot complete from ${JSON.stringify(remembered)}`);
    return { completion: { values: remembered.slice(0, 100) } };
  });
  serveResources(server);
  return server;
}

/** A tools/call: `progress` and `hang` answer here; the rest ask the client or act on this process's state (see `answer`). */
async function callTool(server: Server, request: CallToolRequest, extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Promise<CallToolResult> {
  inflight++;
  try {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const token = request.params._meta?.progressToken;
    if (request.params.name === "progress" && token !== undefined) {
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: 1, total: 1, message: String(args.message ?? "") },
      });
      // Not the last thing before the answer: the downstream SDK client can handle a progress notification after the
      // response that follows it at once (see server/test/fast-lane.test.ts), which is not what the matrix checks.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return text("reported");
    }
    if (request.params.name === "hang") {
      // Calls to a server that asks its client may take turns: the caller learns the call arrived from this, not by asking again.
      if (token !== undefined)
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: 0, message: "hanging" } });
      return await hang(extra.signal);
    }
    if (request.params.name === "hanging") return text(JSON.stringify(hangs));
    return await answer(server, { name: request.params.name, args, id: extra.requestId });
  } finally {
    inflight--;
  }
}

/** Resources whose text the test chooses (`text/<base64url>`), and `ask/<message>`, read after asking the client. */
function serveResources(server: Server): void {
  // A resource's text is the URI's last segment, base64url-decoded: the test chooses what a read returns. Reading `ask/<message>` asks the client first.
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [{ uri: `${scheme}://text/${Buffer.from("hello").toString("base64url")}`, name: "hello", mimeType: "text/plain" }],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      { uriTemplate: `${scheme}://text/{text}`, name: "text" },
      { uriTemplate: `${scheme}://ask/{message}`, name: "ask" },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const asking = `${scheme}://ask/`;
    if (uri.startsWith(asking)) {
      const answered = await elicit(server, decodeURIComponent(uri.slice(asking.length)), extra.requestId);
      return { contents: [{ uri, mimeType: "text/plain", text: JSON.stringify(answered) }] };
    }
    const prefix = `${scheme}://text/`;
    if (!uri.startsWith(prefix)) throw new McpError(-32002, `no resource ${uri}`);
    const body = Buffer.from(uri.slice(prefix.length), "base64url").toString("utf8");
    return {
      contents: [
        { uri, mimeType: "text/plain", text: body },
        { uri: `${uri}#blob`, mimeType: "text/plain", blob: Buffer.from(body, "utf8").toString("base64") },
      ],
    };
  });
}

async function answer(server: Server, { name, args, id }: { name: string; args: Record<string, unknown>; id: RequestId }): Promise<CallToolResult> {
  for (const run of onNextCall.splice(0)) run();
  // Asked now: on this call's own stream.
  const related = { relatedRequestId: id };
  switch (name) {
    case "ask": {
      const message = String(args.message ?? "a question");
      if ((args.when ?? "now") === "now") {
        try {
          const answered = await elicit(server, message, args.stream === "standalone" ? undefined : id);
          await sleep(Number(args.thenMs ?? 0));
          return text(JSON.stringify(answered));
        } catch (error) {
          return text(`asking failed: ${errorText(error)}`, true);
        }
      }
      return text(
        await schedule(args.when, args.delayMs, async () => {
          try {
            late.push({ message, answer: await elicit(server, message) });
          } catch (error) {
            late.push({ message, error: errorText(error) });
          }
        }),
      );
    }
    case "log":
      return text(await schedule(args.when, args.delayMs, () => log(server, String(args.data ?? ""))));
    case "sample":
      try {
        const answer = await server.createMessage(
          { messages: [{ role: "user", content: { type: "text", text: String(args.message ?? "a prompt") } }], maxTokens: 100 },
          related,
        );
        return text(answer.content.type === "text" ? answer.content.text : JSON.stringify(answer.content));
      } catch (error) {
        return text(`sampling failed: ${errorText(error)}`, true);
      }
    case "progress":
      return text("the call asked for no progress");
    case "remember":
      remembered.push(String(args.value ?? ""));
      return text(`remembered ${remembered.length}`);
    case "recall":
      return text(JSON.stringify(remembered));
    case "roots":
      try {
        return text(JSON.stringify(await server.listRoots(undefined, related)));
      } catch (error) {
        return text(`listing roots failed: ${errorText(error)}`, true);
      }
    case "roots_seen":
      return text(JSON.stringify(await Promise.all(rootsAsks)));
    case "inflight":
      return text(String(inflight));
    case "late":
      return text(JSON.stringify(late));
    case "slow":
      await sleep(Number(args.ms ?? 500));
      return text("slept");
    case "hold": {
      const key = String(args.key ?? "");
      await new Promise<void>((resolve) => held.set(key, [...(held.get(key) ?? []), resolve]));
      return text("released");
    }
    case "release": {
      const key = String(args.key ?? "");
      const waiting = held.get(key) ?? [];
      held.delete(key);
      for (const resolve of waiting) resolve();
      return text(String(waiting.length));
    }
    case "result":
      return args.result as CallToolResult;
    case "throw":
      throw new McpError(ErrorCode.InternalError, String(args.message ?? "failed"), args.data);
    default:
      throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
  }
}

/** Streamable HTTP with sessions, one server each. */
async function serveHttp(port: number): Promise<void> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      transport = created;
      await createAskingServer().connect(created);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  const address = http.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : port}\n`);
}

if (httpPort !== undefined) await serveHttp(Number(httpPort));
else {
  await createAskingServer().connect(new StdioServerTransport());
  // Like a well-behaved server, it ends with its client.
  process.stdin.once("end", () => process.exit(0));
}
