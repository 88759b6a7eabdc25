import { SEPARATOR, type CatalogEntry, type ToolResult, estimateTokens } from "@codemux/core";
import type { ReadResultRequest } from "../meta-tools/read-result";
import type { Codemux } from "../core";
import { MAX_QUERY_CHARS, MAX_RELAYOUT_BYTES, MAX_TOOL_NAME_CHARS } from "../defaults";
import { BadRequestError } from "../errors";
import { executeCode } from "../meta-tools/execute-code";
import { layoutJson, limitResult } from "../meta-tools/limit-result";
import { readResult } from "../meta-tools/read-result";
import { MetaToolRegistry, defineMetaTool, type MetaToolContext } from "../meta-tools/registry";
import { searchTools } from "../meta-tools/search-tools";
import { errorResult, textResult } from "../render";
import { attachSkills } from "../skills/attach";
import type { Surface, SurfaceFactory } from "./surface";

/** The one tool of mode `dispatch`. */
export const DISPATCH_TOOL_NAME = "codemux";

type Action = "list" | "search" | "call" | "exec" | "read";

/** The read action's fields are read_result's own. */
export interface DispatchRequest extends Partial<Omit<ReadResultRequest, "op">> {
  action: Action;
  server?: string;
  schemas?: boolean;
  annotations?: boolean;
  query?: string;
  limit?: number;
  tool?: string;
  arguments?: Record<string, unknown>;
  argumentsFrom?: string;
  pointer?: string;
  keep?: boolean;
  code?: string;
  timeoutMs?: number;
  op?: string;
}

/** The fields each action takes; any other field is refused by name, so a misplaced one is never silently ignored. */
const ACTION_FIELDS: Record<Action, readonly string[]> = {
  list: ["server", "schemas", "annotations"],
  search: ["query", "server", "limit"],
  call: ["tool", "server", "arguments", "argumentsFrom", "pointer", "keep"],
  exec: ["code", "timeoutMs"],
  read: ["handle", "op", "lines", "from", "to", "pattern", "context", "fromByte", "maxBytes"],
};

/** `list` names every tool of the catalog up to this many; past it, only servers unless one is named. */
const LIST_ALL_TOOLS_UP_TO = 50;
/** Characters of a kept result shown in the answer to `keep: true`. */
const KEEP_PREVIEW_CHARS = 300;
/** How many servers an ambiguous bare tool name lists. */
const MAX_AMBIGUOUS_SHOWN = 5;

// The whole upfront cost of this mode: every word earns its place (under 500 tokens with the schema).
export const dispatchTool = defineMetaTool<DispatchRequest>({
  name: DISPATCH_TOOL_NAME,
  description: [
    "Use many MCP servers' tools through this one tool; pick an action:",
    "search {query}: find tools for a task (start here).",
    "list {server?, schemas?, annotations?}: servers and their tools.",
    "call {tool, arguments | argumentsFrom: handle, server?, keep?}: call a tool (server__tool, or a bare name if unique). keep:true keeps the result and answers with a handle and a preview; argumentsFrom takes a kept JSON object (at JSON Pointer pointer) as arguments, so data passes between tools without you.",
    "exec {code}: run TypeScript that imports tools (mcp/servers/<server>/<tool>) or saved skills (mcp/skills/<name>) and chains them; returns export default.",
    "read {handle, op: stat|head|tail|slice|grep|read}: page a kept result. Results over 64 KB are kept automatically.",
  ].join("\n"),
  inputSchema: {
    type: "object",
    properties: {
      action: { type: "string", enum: ["search", "list", "call", "exec", "read"] },
      query: { type: "string", maxLength: MAX_QUERY_CHARS },
      server: { type: "string", maxLength: 200 },
      limit: { type: "integer", minimum: 1, maximum: 50 },
      schemas: { type: "boolean" },
      annotations: { type: "boolean" },
      tool: { type: "string", maxLength: MAX_TOOL_NAME_CHARS },
      arguments: { type: "object" },
      argumentsFrom: { type: "string", maxLength: 100 },
      pointer: { type: "string", maxLength: 1000 },
      keep: { type: "boolean" },
      code: { type: "string" },
      timeoutMs: { type: "integer", minimum: 100 },
      handle: { type: "string", maxLength: 100 },
      op: { type: "string", enum: ["stat", "head", "tail", "slice", "grep", "read"] },
      lines: { type: "integer", minimum: 1 },
      from: { type: "integer", minimum: 1 },
      to: { type: "integer", minimum: 1 },
      pattern: { type: "string" },
      context: { type: "integer", minimum: 0 },
      fromByte: { type: "integer", minimum: 0 },
      maxBytes: { type: "integer", minimum: 1 },
    },
    required: ["action"],
  },
  run: (request, ctx) => dispatch(request, ctx),
});

/** The meta-tools dispatch delegates to: the same input reading, bounds and answers as mode `code`. */
const delegates = new MetaToolRegistry([searchTools, executeCode, readResult]);

/**
 * Mode `dispatch`: one tool, `codemux`, whose `action` searches, lists, calls, runs a snippet or reads
 * a kept result, for clients with a strict tool budget.
 */
export const dispatchSurface: SurfaceFactory = (core): Surface => {
  // Saved skills are importable (exec) and searchable from the first request.
  attachSkills(core);
  const registry = new MetaToolRegistry([dispatchTool]);
  return {
    name: "dispatch",
    listChanges: false,
    instructions: () => {
      // Known at once from the config: the client asks for these at initialize, before servers have connected.
      const servers = core.pool.names;
      return [
        `codemux connects you to many MCP servers' tools through one tool, ${DISPATCH_TOOL_NAME}: search first, then call; chain several calls with exec, or with keep and argumentsFrom.`,
        servers.length ? `Servers: ${servers.join(", ")}.` : "",
      ]
        .join(" ")
        .trim();
    },
    listTools: async () => registry.definitions(),
    callTool: (name, args, ctx) => registry.call(name, args, ctx),
  };
};

async function dispatch(request: DispatchRequest, ctx: MetaToolContext): Promise<ToolResult> {
  const { action } = request;
  const allowed = ACTION_FIELDS[action];
  const stray = Object.keys(request).filter((field) => field !== "action" && !allowed.includes(field));
  if (stray.length) {
    throw new BadRequestError(
      `${stray.map((f) => `"${f}"`).join(", ")} ${stray.length === 1 ? "does" : "do"} not belong to action "${action}"; it takes ${allowed.join(", ")}.`,
    );
  }
  switch (action) {
    case "search":
      return delegates.call("search_tools", pick(request, ["query", "server", "limit"]), ctx);
    case "list":
      return limitResult(ctx.core, { tool: `${DISPATCH_TOOL_NAME} list`, result: jsonResult(await listServers(ctx.core, request)), owner: ctx.session.id });
    case "call":
      return callAction(request, ctx);
    case "exec":
      return delegates.call("execute_code", pick(request, ["code", "timeoutMs"]), ctx);
    case "read":
      return delegates.call("read_result", pick(request, ACTION_FIELDS.read), ctx);
  }
}

function pick(request: DispatchRequest, fields: readonly string[]): Record<string, unknown> {
  const source = request as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of fields) if (source[field] !== undefined) out[field] = source[field];
  return out;
}

interface ListedServer {
  name: string;
  state: string;
  tools: number;
  error?: string;
  toolList?: Array<{ name: string; tool: string; description?: string; annotations?: unknown; inputSchema?: unknown }>;
}

/** Servers (state, tool count, why one is down) and, when few or asked for by server, their tools. */
async function listServers(core: Codemux, request: DispatchRequest): Promise<Record<string, unknown>> {
  await core.discovered();
  const statuses = core.status();
  const known = new Set([...statuses.map((s) => s.name), ...core.catalog.servers()]);
  if (request.server !== undefined && !known.has(request.server)) {
    throw new BadRequestError(`No server named "${request.server.slice(0, 100)}". Servers: ${[...known].sort().join(", ") || "none"}.`);
  }
  const withTools = request.server !== undefined || core.catalog.size <= LIST_ALL_TOOLS_UP_TO;
  const names = request.server !== undefined ? [request.server] : [...known].sort();
  const servers = names.map((name): ListedServer => {
    const status = statuses.find((s) => s.name === name);
    const entries = core.catalog.entries(name);
    return {
      name,
      state: status?.state ?? "ready",
      tools: entries.length,
      ...(status?.error ? { error: status.error } : {}),
      ...(withTools ? { toolList: entries.map((e) => listedTool(e, request)) } : {}),
    };
  });
  return {
    servers,
    ...(withTools ? {} : { hint: `${core.catalog.size} tools: search {query}, or list {server} for one server's tools.` }),
    ...(core.pendingNote().length ? { note: core.pendingNote().join(" ") } : {}),
  };
}

function listedTool(entry: CatalogEntry, request: DispatchRequest): NonNullable<ListedServer["toolList"]>[number] {
  return {
    name: entry.name,
    tool: entry.qualifiedName,
    ...(entry.summary ? { description: entry.summary } : {}),
    ...(request.annotations && entry.tool.annotations ? { annotations: entry.tool.annotations } : {}),
    ...(request.schemas ? { inputSchema: entry.tool.inputSchema } : {}),
  };
}

async function callAction(request: DispatchRequest, ctx: MetaToolContext): Promise<ToolResult> {
  const { core, session } = ctx;
  if (request.tool === undefined) throw new BadRequestError('call needs "tool": a server__tool name, or a tool name that one server has (search finds them).');
  if (request.arguments !== undefined && request.argumentsFrom !== undefined) throw new BadRequestError('Give "arguments" or "argumentsFrom", not both.');
  if (request.pointer !== undefined && request.argumentsFrom === undefined)
    throw new BadRequestError('"pointer" selects within "argumentsFrom"; give the handle too.');
  const name = await resolveToolName(core, request.tool, request.server);
  const args =
    request.argumentsFrom !== undefined ? await argumentsFromKept(core, session.id, request.argumentsFrom, request.pointer) : (request.arguments ?? {});
  let result: ToolResult;
  try {
    result = await core.callTool({
      name,
      arguments: args,
      origin: "dispatch",
      session,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.progress ? { progress: ctx.progress } : {}),
    });
  } catch (error) {
    return errorResult(error, core.logger);
  }
  // Nothing to keep when the result has no text (only images or audio): it comes back as it is.
  if (!request.keep || result.isError || keptTextOf(result) === "") return limitResult(core, { tool: name, result, owner: session.id });
  return keepResult(core, name, result, session.id);
}

/** `server` + `tool`, a `server__tool` name, or a bare tool name that exactly one server has. */
async function resolveToolName(core: Codemux, tool: string, server: string | undefined): Promise<string> {
  const name = tool.trim();
  if (server !== undefined) return `${server}${SEPARATOR}${name}`;
  if (core.catalog.get(name)) return name;
  await core.discovered();
  if (core.catalog.get(name)) return name;
  const matches = core.catalog.entries().filter((e) => e.name === name || e.functionName === name);
  if (matches.length === 1) return (matches[0] as CatalogEntry).qualifiedName;
  if (matches.length > 1) {
    const shown = matches.slice(0, MAX_AMBIGUOUS_SHOWN).map((e) => e.qualifiedName);
    throw new BadRequestError(
      `Tool "${name}" exists in ${matches.length} servers (${shown.join(", ")}${matches.length > shown.length ? ", …" : ""}); give the server__tool name or "server".`,
    );
  }
  // Unknown: the pipeline's resolution answers with close names.
  return name;
}

/** The arguments a kept result holds: its text parsed as JSON, optionally at a JSON Pointer, which must be an object. */
async function argumentsFromKept(core: Codemux, owner: string, handle: string, pointer: string | undefined): Promise<Record<string, unknown>> {
  const kept = core.results.get(handle, owner);
  if (kept.bytes > MAX_RELAYOUT_BYTES) {
    throw new BadRequestError(
      `${handle} is ${kept.bytes} bytes; arguments from a kept result may be at most ${MAX_RELAYOUT_BYTES}. Pick the part you need in exec.`,
    );
  }
  const text = await core.results.read(handle, owner);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestError(`${handle} (from ${kept.tool}) is not JSON, so it cannot be a call's arguments; read it, or shape it in exec.`);
  }
  const selected = pointer === undefined ? value : atPointer(value, pointer, handle);
  if (typeof selected !== "object" || selected === null || Array.isArray(selected)) {
    throw new BadRequestError(
      `Arguments must be a JSON object; ${handle}${pointer ? ` at ${pointer}` : ""} is ${Array.isArray(selected) ? "a list" : selected === null ? "null" : typeof selected}.`,
    );
  }
  return selected as Record<string, unknown>;
}

/** RFC 6901: `/files/0`, with `~1` for "/" and `~0` for "~". */
function atPointer(value: unknown, pointer: string, handle: string): unknown {
  if (pointer === "") return value;
  if (!pointer.startsWith("/")) throw new BadRequestError(`"pointer" must start with "/" (a JSON Pointer such as "/files/0"); got "${pointer.slice(0, 100)}".`);
  let current = value;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const next = typeof current === "object" && current !== null && Object.hasOwn(current, key) ? (current as Record<string, unknown>)[key] : undefined;
    if (next === undefined) throw new BadRequestError(`${handle} has nothing at "${pointer.slice(0, 200)}" (no "${key.slice(0, 100)}").`);
    current = next;
  }
  return current;
}

/** Keeps a result for the next call or for read, and answers with its handle, size and a short preview. */
async function keepResult(core: Codemux, tool: string, result: ToolResult, owner: string): Promise<ToolResult> {
  const text = keptTextOf(result);
  const kept = await core.results.keep(tool, text, owner);
  const preview = text.length > KEEP_PREVIEW_CHARS ? `${text.slice(0, KEEP_PREVIEW_CHARS)}…` : text;
  return jsonResult({
    handle: kept.handle,
    tool,
    bytes: kept.bytes,
    lines: kept.lines,
    estimatedTokens: estimateTokens(text),
    expiresAt: new Date(kept.expiresAt).toISOString(),
    preview,
    hint: `pass it on with {action:"call", argumentsFrom:"${kept.handle}"}, or read it with {action:"read", handle:"${kept.handle}"}`,
  });
}

/** What a kept call result holds: its text parts, as the client would have read them (as limitResult keeps them), else the structured value laid out for paging. */
function keptTextOf(result: ToolResult): string {
  const texts = (result.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : []));
  if (texts.length > 0 || result.structuredContent === undefined) return texts.join("\n");
  const json = JSON.stringify(result.structuredContent);
  return json.length > MAX_RELAYOUT_BYTES ? json : (layoutJson(result.structuredContent) ?? json);
}

/** A JSON answer with its own size in tokens, as execute_code answers (unless the body gives the tokens of what it describes). */
function jsonResult(body: Record<string, unknown>): ToolResult {
  const json = JSON.stringify(body);
  if ("estimatedTokens" in body) return textResult(json);
  const estimate = estimateTokens(json);
  return textResult(`${json.slice(0, -1)},"estimatedTokens":${estimate + Math.ceil(`,"estimatedTokens":${estimate}`.length / 4)}}`);
}
