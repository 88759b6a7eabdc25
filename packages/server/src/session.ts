import { UnknownToolError } from "@codemux/catalog";
import type { ExecuteResult } from "@codemux/sandbox";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Progress, type ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { Codemux } from "./core";
import { BadRequestError, CodemuxError } from "./errors";
import { enumArg, integerArg, stringArg } from "./meta-tools/arguments";
import { META_TOOLS } from "./meta-tools/definitions";
import { listModules, readModule } from "./meta-tools/modules";
import { limitResult, readResult } from "./meta-tools/results-view";
import { VERSION } from "./version";

const INSTRUCTIONS =
  "codemux connects you to many MCP servers' tools without listing them all. search_tools finds tools; read_module shows one as a typed TypeScript function; execute_code runs TypeScript that imports and chains them, so only the final answer comes back. call_tool calls one tool directly.";

type Args = Record<string, unknown>;
interface RequestContext {
  signal: AbortSignal;
  progress: ((progress: Progress) => void) | undefined;
}

/** The MCP server of one client session, over the shared core. */
export function createSessionServer(core: Codemux): Server {
  const server = new Server(
    { name: "codemux", version: VERSION },
    { capabilities: { tools: { listChanged: true } }, instructions: core.mode === "code" ? INSTRUCTIONS : undefined },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    if (core.mode === "code") return { tools: [...META_TOOLS] };
    await core.ready();
    return { tools: core.passthroughTools() };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const token = request.params._meta?.progressToken;
    const context: RequestContext = {
      signal: extra.signal,
      progress:
        token === undefined
          ? undefined
          : (progress) => void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...progress } } as ServerNotification).catch(() => undefined),
    };
    const args = (request.params.arguments ?? {}) as Args;
    try {
      if (core.mode === "passthrough") return await forward(core, request.params.name, args, context);
      return await dispatch(core, request.params.name, args, context);
    } catch (error) {
      return errorResult(error);
    }
  });

  if (core.mode === "passthrough") {
    let timer: NodeJS.Timeout | undefined;
    const notify = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void server.sendToolListChanged().catch(() => undefined), 200);
    };
    core.on("toolsChanged", notify);
    server.onclose = () => {
      clearTimeout(timer);
      core.off("toolsChanged", notify);
    };
  }
  return server;
}

async function dispatch(core: Codemux, name: string, args: Args, context: RequestContext): Promise<CallToolResult> {
  switch (name) {
    case "search_tools":
      return text(
        await core.searchTools({
          query: stringArg(args, "query", { required: true }),
          limit: integerArg(args, "limit", 10, 1, 50),
          detail: enumArg(args, "detail", ["name", "summary", "full"] as const, "summary"),
          ...(stringArg(args, "server") ? { server: stringArg(args, "server") } : {}),
        }),
      );
    case "list_modules":
      await core.ready();
      return text(listModules(core.catalog, core.modules, stringArg(args, "path")) + withNotes(core));
    case "read_module":
      await core.ready();
      return text(readModule(core.modules, stringArg(args, "specifier", { required: true })));
    case "execute_code":
      return executeCode(core, args, context);
    case "call_tool":
      return forward(core, stringArg(args, "name", { required: true }), toolArguments(args), context);
    case "read_result":
      return text(
        readResult(core.results, {
          handle: stringArg(args, "handle", { required: true }),
          op: enumArg(args, "op", ["stat", "head", "tail", "slice", "grep"] as const, "stat"),
          ...optionalIntegers(args, ["lines", "from", "to", "context"]),
          ...(stringArg(args, "pattern") !== undefined ? { pattern: stringArg(args, "pattern") } : {}),
        }),
      );
    default:
      throw new BadRequestError(`Unknown tool "${name}". codemux offers ${META_TOOLS.map((t) => t.name).join(", ")}; downstream tools are called through call_tool or execute_code.`);
  }
}

async function forward(core: Codemux, name: string, args: unknown, context: RequestContext): Promise<CallToolResult> {
  const result = await core.callTool(name, args, { signal: context.signal, ...(context.progress ? { onprogress: context.progress } : {}) });
  return limitResult(name, result, core.results, core.largeResultBytes);
}

async function executeCode(core: Codemux, args: Args, context: RequestContext): Promise<CallToolResult> {
  const code = stringArg(args, "code", { required: true });
  let step = 0;
  const run = await core.executeCode(code, {
    timeoutMs: integerArg(args, "timeoutMs", 30_000, 100, 60_000),
    signal: context.signal,
    // Inner calls' progress keeps the outer request alive; one counter keeps the values increasing.
    ...(context.progress ? { onprogress: ({ tool, progress }) => context.progress?.({ progress: ++step, message: `${tool}: ${progress.progress}${progress.total ? `/${progress.total}` : ""}` }) } : {}),
  });
  return limitResult("execute_code", executionResult(run), core.results, core.largeResultBytes);
}

/** The snippet's outcome as compact JSON: result, output, time and calls; an error names its kind and position. */
export function executionResult(run: ExecuteResult): CallToolResult {
  const body: Record<string, unknown> = {};
  if (run.ok) body.result = run.result ?? null;
  else body.error = run.error;
  if (run.stdout) body.stdout = run.stdout;
  if (run.stderr) body.stderr = run.stderr;
  body.durationMs = Math.round(run.durationMs);
  body.toolCalls = run.calls;
  return { content: [{ type: "text", text: JSON.stringify(body) }], ...(run.ok ? {} : { isError: true }) };
}

/** `args` as an object, or `args_json` as a JSON string of one (some clients can only send strings). */
function toolArguments(args: Args): unknown {
  if (args.args !== undefined && args.args !== null) {
    if (typeof args.args === "string") return parseJsonArgs(args.args, "args");
    return args.args;
  }
  if (typeof args.args_json === "string") return parseJsonArgs(args.args_json, "args_json");
  return {};
}

function parseJsonArgs(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`"${field}" is not valid JSON: ${(error as Error).message}`);
  }
}

function optionalIntegers(args: Args, names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of names) if (args[name] !== undefined) out[name] = integerArg(args, name, 0, 0, Number.MAX_SAFE_INTEGER);
  return out;
}

function withNotes(core: Codemux): string {
  const notes = core.pendingNote();
  return notes.length ? `\n${notes.join("\n")}` : "";
}

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

/** Every failure reaches the model as a sentence in an error result, never a stack trace. */
export function errorResult(error: unknown): CallToolResult {
  const known = error instanceof CodemuxError || error instanceof UnknownToolError || (error instanceof Error && "code" in error && typeof (error as { code: unknown }).code === "string");
  const message = error instanceof Error ? error.message : String(error);
  return { content: [{ type: "text", text: known ? message : `codemux internal error: ${message}` }], isError: true };
}
