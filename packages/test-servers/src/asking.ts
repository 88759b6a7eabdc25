#!/usr/bin/env node
/**
 * An MCP server for codemux's isolation tests: it asks its client questions (elicitation, roots,
 * sampling) during a call or late, after the call that caused them ended; it logs during a call or
 * late; it keeps values in its process; it answers with exactly the result or JSON-RPC error it is
 * given; and it serves text resources whose contents are in their URIs (base64url). `--scheme NAME`
 * names its resource URIs' scheme (default `asking`), `--instructions TEXT` what it says at initialize.
 * Its prompt and its completions answer what it was asked to remember: a test chooses what they carry.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
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
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

const flag = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const scheme = flag("--scheme") ?? "asking";
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
  tool("inflight", "How many tool calls this process is answering now, this one included."),
  tool("result", "Answer with exactly this result (content, structuredContent, _meta, isError).", { result: { type: "object" } }),
  tool("throw", "Answer with a JSON-RPC error of this message and data.", { message: { type: "string" }, data: {} }),
];

const server = new Server(
  { name: "asking", version: "1.0.0" },
  { capabilities: { tools: {}, logging: {}, resources: {}, prompts: {}, completions: {} }, ...(instructions ? { instructions } : {}) },
);
/** Work deferred to the start of the next tool call (`when: "next-call"`). */
const onNextCall: Array<() => void> = [];
const late: Array<{ message: string; answer?: unknown; error?: string }> = [];
const rootsAsks: Array<Promise<unknown>> = [];
const remembered: string[] = [];

const text = (value: string, isError = false): CallToolResult => ({ content: [{ type: "text", text: value }], ...(isError ? { isError } : {}) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

function elicit(message: string): Promise<unknown> {
  return server.elicitInput({ message, requestedSchema: { type: "object", properties: { answer: { type: "string" } } } });
}

function log(data: string): Promise<void> {
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

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
let inflight = 0;
server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
  inflight++;
  try {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const token = request.params._meta?.progressToken;
    if (request.params.name === "progress" && token !== undefined) {
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: 1, total: 1, message: String(args.message ?? "") },
      });
      return text("reported");
    }
    return await answer(request.params.name, args);
  } finally {
    inflight--;
  }
});

async function answer(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  for (const run of onNextCall.splice(0)) run();
  switch (name) {
    case "ask": {
      const message = String(args.message ?? "a question");
      if ((args.when ?? "now") === "now") {
        try {
          const answered = await elicit(message);
          await sleep(Number(args.thenMs ?? 0));
          return text(JSON.stringify(answered));
        } catch (error) {
          return text(`asking failed: ${errorText(error)}`, true);
        }
      }
      return text(
        await schedule(args.when, args.delayMs, async () => {
          try {
            late.push({ message, answer: await elicit(message) });
          } catch (error) {
            late.push({ message, error: errorText(error) });
          }
        }),
      );
    }
    case "log":
      return text(await schedule(args.when, args.delayMs, () => log(String(args.data ?? ""))));
    case "sample":
      try {
        const answer = await server.createMessage({
          messages: [{ role: "user", content: { type: "text", text: String(args.message ?? "a prompt") } }],
          maxTokens: 100,
        });
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
        return text(JSON.stringify(await server.listRoots()));
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
    case "result":
      return args.result as CallToolResult;
    case "throw":
      throw new McpError(ErrorCode.InternalError, String(args.message ?? "failed"), args.data);
    default:
      throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
  }
}
server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
  rootsAsks.push(
    server.listRoots().then(
      (r) => r.roots,
      (error) => ({ error: errorText(error) }),
    ),
  );
});

// A prompt made of this process's state: whoever gets it sees what was remembered here.
server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [{ name: "recall", description: "What this process was asked to remember." }] }));
server.setRequestHandler(GetPromptRequestSchema, async () => ({
  messages: [{ role: "user", content: { type: "text", text: JSON.stringify(remembered) } }],
}));

// Completions offer what was remembered; the value "fail" answers with an error that quotes it.
server.setRequestHandler(CompleteRequestSchema, async (request) => {
  if (request.params.argument.value === "fail") throw new McpError(ErrorCode.InvalidParams, `cannot complete from ${JSON.stringify(remembered)}`);
  return { completion: { values: remembered.slice(0, 100) } };
});

// A resource's text is the URI's last segment, base64url-decoded: the test chooses what a read returns.
const template = `${scheme}://text/{text}`;
server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: [{ uri: `${scheme}://text/${Buffer.from("hello").toString("base64url")}`, name: "hello", mimeType: "text/plain" }],
}));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [{ uriTemplate: template, name: "text" }] }));
server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
  const { uri } = request.params;
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

await server.connect(new StdioServerTransport());
// Like a well-behaved server, it ends with its client.
process.stdin.once("end", () => process.exit(0));
