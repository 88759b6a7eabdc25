import {
  SEPARATOR,
  defineMetaTool,
  estimateTokens,
  textResult,
  type CatalogEntry,
  type MetaTool,
  type MetaToolContext,
  type SessionInfo,
  type Surface,
  type ToolResult,
} from "@codemux/core";
import { besideApps } from "../apps";
import { MAX_INLINE_BYTES, MAX_QUERY_CHARS, MAX_RELAYOUT_BYTES, MAX_TOOL_NAME_CHARS } from "../defaults";
import { BadRequestError } from "../errors";
import { executeCode } from "../meta-tools/execute-code";
import { readResult, type ReadResultRequest } from "../meta-tools/read-result";
import { readInput } from "../meta-tools/input";
import { MetaToolRegistry } from "../meta-tools/registry";
import { searchTools } from "../meta-tools/search-tools";
import { callRequest } from "../pipeline/call-request";
import { sessionInstructions } from "../render/instructions";
import { DISPATCH_HINTS } from "../render/hints";
import { keepIfLarge, layoutJson, limitResult, topLevelKeys, type TopLevelKeys } from "../render/limit-result";
import { KEPT_HANDLE_PATTERN, type KeptResult, type ResultOwner } from "../results";
import { errorResult } from "../render/text";
import type { CodemuxServices } from "../services";
import { readArgumentFile, writeResultFile } from "./dispatch-files";
import type { SurfaceFactory } from "./surface";

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
  /** A kept result's handle, or a file under the config's dispatch.allowArgumentFiles (004's argumentsFile). */
  argumentsFile?: string;
  pointer?: string;
  keep?: boolean;
  /** Keep the result and, with the config's dispatch.resultFileDir, write it to a file there (004's resultToFile). */
  resultToFile?: boolean;
  resultSizeThreshold?: number;
  code?: string;
  timeoutMs?: number;
  op?: string;
}

/** The fields each action takes; any other field is refused by name, so a misplaced one is never silently ignored. */
const ACTION_FIELDS: Record<Action, readonly string[]> = {
  list: ["server", "schemas", "annotations"],
  search: ["query", "server", "limit"],
  call: ["tool", "server", "arguments", "argumentsFrom", "argumentsFile", "pointer", "keep", "resultToFile", "resultSizeThreshold"],
  exec: ["code", "timeoutMs"],
  read: ["handle", "op", "lines", "from", "to", "pattern", "context", "fromByte", "maxBytes"],
};

/** `list` names every tool of the catalog up to this many; past it, only servers unless one is named. */
const LIST_ALL_TOOLS_UP_TO = 50;
/** `_meta` key of a call whose arguments came from argumentsFile: `{ _fromFile: "<what it named>" }`. */
export const META_ARGUMENTS = "codemux/arguments";
/** Characters of a kept result shown in the answer to `keep: true`. */
const KEEP_PREVIEW_CHARS = 300;
/** How many servers an ambiguous bare tool name lists. */
const MAX_AMBIGUOUS_SHOWN = 5;

// The whole upfront cost of this mode: every word earns its place (under 500 tokens with the schema).
export const dispatchTool = defineMetaTool<DispatchRequest, CodemuxServices>({
  name: DISPATCH_TOOL_NAME,
  description: [
    "Use many MCP servers' tools through this one tool; pick an action:",
    "search {query}: find tools for a task (start here).",
    "list {server?, schemas?, annotations?}: servers and their tools.",
    "call {tool, arguments | argumentsFrom: handle, server?, keep?}: call a tool (server__tool, or a bare name if unique). keep:true keeps the result and answers with a handle and a preview; argumentsFrom takes a kept JSON object (at JSON Pointer pointer) as arguments, so data passes between tools without you.",
    "exec {code}: run TypeScript that imports tools (mcp/servers/<server>/<tool>) or saved skills (mcp/skills/<name>) and chains them; returns export default.",
    "read {handle, op: stat|head|tail|slice|grep|read}: page a kept result (~4 chars a token). Large results are kept automatically.",
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
      // Unlisted (004's names, for clients written for it): a handle or a file under dispatch.allowArgumentFiles; keep, and write to dispatch.resultFileDir.
      argumentsFile: { type: "string", maxLength: 4096, unlisted: true },
      resultToFile: { type: "boolean", unlisted: true },
      // Unlisted: the answer of an automatically kept result names it; bytes, 0 = the global threshold, capped at MAX_INLINE_BYTES.
      resultSizeThreshold: { type: "integer", minimum: 0, unlisted: true },
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

/** Runs a meta-tool of mode `code` for an action: the same input reading, bounds and answers (with dispatch's hints, from the context). */
function delegate<Input>(tool: MetaTool<Input, CodemuxServices>, args: Record<string, unknown>, ctx: MetaToolContext<CodemuxServices>): Promise<ToolResult> {
  return tool.run(readInput(tool.definition.inputSchema, args) as Input, ctx);
}

/**
 * Mode `dispatch`: one tool, `codemux`, whose `action` searches, lists, calls, runs a snippet or reads
 * a kept result, for clients with a strict tool budget.
 */
export const dispatchSurface: SurfaceFactory = ({ services: shared, hints }): Surface => {
  const services = { ...shared, hints: hints ?? DISPATCH_HINTS };
  const registry = new MetaToolRegistry(services, [dispatchTool]);
  return besideApps(
    services,
    {
      name: "dispatch",
      listChanges: false,
      instructions: (session) =>
        sessionInstructions(
          services,
          session,
          `codemux connects you to many MCP servers' tools through one tool, ${DISPATCH_TOOL_NAME}: search first, then call; chain several calls with exec, or with keep and argumentsFrom.`,
        ),
      listTools: async () => registry.definitions(),
      callTool: (name, args, request) => registry.call(name, args, request),
    },
    { origin: "dispatch", own: (name) => registry.has(name) },
  );
};

async function dispatch(request: DispatchRequest, ctx: MetaToolContext<CodemuxServices>): Promise<ToolResult> {
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
      return delegate(searchTools, pick(request, ["query", "server", "limit"]), ctx);
    case "list":
      return limitResult(ctx.services, {
        tool: `${DISPATCH_TOOL_NAME} list`,
        result: jsonResult(await listServers(ctx.services, request, ctx.session)),
        owner: ctx.session,
      });
    case "call":
      return callAction(request, ctx);
    case "exec":
      return delegate(executeCode, pick(request, ["code", "timeoutMs"]), ctx);
    case "read":
      return delegate(readResult, pick(request, ACTION_FIELDS.read), ctx);
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
async function listServers(services: CodemuxServices, request: DispatchRequest, session: SessionInfo): Promise<Record<string, unknown>> {
  const { readiness, access } = services;
  const catalog = access.catalog(session);
  await readiness.discovered();
  const statuses = readiness.status().filter((s) => catalog.entries(s.name).length > 0 || access.seesServer(session, s.name));
  const known = new Set([...statuses.map((s) => s.name), ...catalog.servers()]);
  if (request.server !== undefined && !known.has(request.server)) {
    throw new BadRequestError(`No server named "${request.server.slice(0, 100)}". Servers: ${[...known].sort().join(", ") || "none"}.`);
  }
  const withTools = request.server !== undefined || catalog.size <= LIST_ALL_TOOLS_UP_TO;
  const names = request.server !== undefined ? [request.server] : [...known].sort();
  const servers = names.map((name): ListedServer => {
    const status = statuses.find((s) => s.name === name);
    const entries = catalog.entries(name);
    return {
      name,
      state: status?.state ?? "ready",
      tools: entries.length,
      ...(status?.error ? { error: services.mask.text(status.error) } : {}),
      ...(withTools ? { toolList: entries.map((e) => listedTool(e, request)) } : {}),
    };
  });
  const pending = readiness.pendingNote(access.serverFilter(session));
  return {
    servers,
    ...(withTools ? {} : { hint: `${catalog.size} tools: search {query}, or list {server} for one server's tools.` }),
    ...(pending.length ? { note: pending.join(" ") } : {}),
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

async function callAction(request: DispatchRequest, ctx: MetaToolContext<CodemuxServices>): Promise<ToolResult> {
  const { services, session } = ctx;
  if (request.tool === undefined) throw new BadRequestError('call needs "tool": a server__tool name, or a tool name that one server has (search finds them).');
  const sources = (["arguments", "argumentsFrom", "argumentsFile"] as const).filter((field) => request[field] !== undefined);
  if (sources.length > 1)
    throw new BadRequestError(`Give one of "arguments", "argumentsFrom" and "argumentsFile", not ${sources.map((s) => `"${s}"`).join(" and ")}.`);
  if (request.pointer !== undefined && request.argumentsFrom === undefined)
    throw new BadRequestError('"pointer" selects within "argumentsFrom"; give the handle too.');
  const name = await resolveToolName(services, { tool: request.tool, server: request.server, session });
  const file = request.argumentsFile;
  const args =
    request.argumentsFrom !== undefined
      ? await argumentsFromKept(services, session.id, request.argumentsFrom, request.pointer)
      : file !== undefined
        ? KEPT_HANDLE_PATTERN.test(file)
          ? await argumentsFromKept(services, session.id, file, undefined)
          : await readArgumentFile(services.dispatchFiles, session.principal, file)
        : (request.arguments ?? {});
  let result: ToolResult;
  try {
    result = await services.pipeline.call(callRequest({ name, args, origin: "dispatch" }, ctx));
  } catch (error) {
    return errorResult(error, services);
  }
  // codemux echoes no arguments; a client of 004 finds where they came from here.
  if (file !== undefined) result = { ...result, _meta: { ...result._meta, [META_ARGUMENTS]: { _fromFile: file } } };
  // Nothing to keep when the result has no text (only images or audio): it comes back as it is.
  if ((request.keep || request.resultToFile) && !result.isError && keptTextOf(result) !== "")
    return keepResult(services, name, result, session, request.resultToFile === true);
  const limited = await keepIfLarge(services, { tool: name, result, owner: session, threshold: request.resultSizeThreshold });
  if (!limited.kept) return limited.result;
  const text = limited.preview.text;
  const notice = keptAnswer(name, limited.kept, {
    autoSpilled: true,
    estimatedTokens: limited.estimatedTokens,
    keys: limited.keys,
    preview: text.length > KEEP_PREVIEW_CHARS ? `${text.slice(0, KEEP_PREVIEW_CHARS)}…` : text,
    hint: `${keptHint(limited.kept.handle)}; a call's resultSizeThreshold (bytes, up to ${MAX_INLINE_BYTES}) lets more through`,
  });
  return limited.isError ? { ...notice, isError: true } : notice;
}

/** `server` + `tool`, a `server__tool` name, or a bare tool name that exactly one server has. */
async function resolveToolName(
  services: CodemuxServices,
  { tool, server, session }: { tool: string; server: string | undefined; session: SessionInfo },
): Promise<string> {
  const { readiness } = services;
  const catalog = services.access.catalog(session);
  const name = tool.trim();
  if (server !== undefined) return `${server}${SEPARATOR}${name}`;
  if (catalog.get(name)) return name;
  await readiness.discovered();
  if (catalog.get(name)) return name;
  const matches = catalog.entries().filter((e) => e.name === name || e.functionName === name);
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
async function argumentsFromKept(services: CodemuxServices, owner: string, handle: string, pointer: string | undefined): Promise<Record<string, unknown>> {
  const kept = await services.results.get(handle, owner);
  if (kept.bytes > MAX_RELAYOUT_BYTES) {
    throw new BadRequestError(
      `${handle} is ${kept.bytes} bytes; arguments from a kept result may be at most ${MAX_RELAYOUT_BYTES}. Pick the part you need in exec.`,
    );
  }
  const text = await services.results.read(handle, owner);
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
async function keepResult(services: CodemuxServices, tool: string, result: ToolResult, owner: ResultOwner, toFile: boolean): Promise<ToolResult> {
  const text = keptTextOf(result);
  const kept = await services.results.keep(tool, text, owner);
  // 004's resultFile: the written file where the config names a folder, else the handle (which `read` pages either way).
  const resultFile = toFile ? ((await writeResultFile(services.dispatchFiles, { principal: owner.principal, tool, text })) ?? kept.handle) : undefined;
  return keptAnswer(tool, kept, {
    ...(resultFile !== undefined ? { resultFile } : {}),
    autoSpilled: false,
    estimatedTokens: estimateTokens(text),
    keys: topLevelKeys(text),
    preview: text.length > KEEP_PREVIEW_CHARS ? `${text.slice(0, KEEP_PREVIEW_CHARS)}…` : text,
    hint: keptHint(kept.handle),
  });
}

/** The answer for a kept result, asked for (`keep`) or not (`autoSpilled`): its handle, size, tokens, first keys, a preview and what to do with it. */
function keptAnswer(
  tool: string,
  kept: KeptResult,
  about: { autoSpilled: boolean; estimatedTokens: number; keys: TopLevelKeys; preview: string; hint: string; resultFile?: string },
): ToolResult {
  return jsonResult({
    handle: kept.handle,
    ...(about.resultFile !== undefined ? { resultFile: about.resultFile } : {}),
    tool,
    autoSpilled: about.autoSpilled,
    bytes: kept.bytes,
    lines: kept.lines,
    estimatedTokens: about.estimatedTokens,
    ...about.keys,
    expiresAt: new Date(kept.expiresAt).toISOString(),
    preview: about.preview,
    hint: about.hint,
  });
}

function keptHint(handle: string): string {
  return `pass it on with {action:"call", argumentsFrom:"${handle}"}, or read it with {action:"read", handle:"${handle}", op:"stat"|"grep"|"slice"}`;
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
