import { type CatalogEntry, toolResultValue, type ToolResult } from "@codemux/core";
import {
  executeCodeMetaTool,
  limitResult,
  readInput,
  readResultMetaTool,
  searchToolsMetaTool,
  type InputSchema,
  type MetaToolContext,
  type SearchDetail,
} from "@codemux/server";
import { readJson } from "./body";
import type { Gateway, RequestContext } from "./context";
import { HttpError } from "./errors";
import { openApiDocument } from "./openapi";
import { sendJson, sendText, withHeaders } from "./respond";

/** Listing without a query answers at most this many tools a page. */
const MAX_LIST = 1000;

/**
 * The REST gateway at /v1: the same meta-tools as the MCP surface (same names, same input schemas
 * read the same way, same pipeline with origin "rest"), answered as JSON with HTTP statuses.
 * Returns false when the path is not one of its routes.
 */
export async function handleRest(gateway: Gateway, ctx: RequestContext, path: string): Promise<boolean> {
  const { req } = ctx;
  const method = req.method ?? "GET";
  const parts = path.split("/").filter(Boolean).map(decodeSegment);
  // parts[0] === "v1"
  const [, resource, name, action] = parts;
  if (resource === "openapi.json" && parts.length === 2) return only(method, ["GET"], () => sendJson(ctx.res, 200, openApiDocument(gateway)));
  if (resource === "tools" && parts.length === 2) return only(method, ["GET"], () => listTools(gateway, ctx));
  if (resource === "tools" && parts.length === 3) return only(method, ["GET"], () => describeTool(gateway, ctx, name as string));
  if (resource === "tools" && parts.length === 4 && action === "call") return only(method, ["POST"], () => callTool(gateway, ctx, name as string));
  if (resource === "exec" && parts.length === 2) return only(method, ["POST"], () => exec(gateway, ctx));
  if (resource === "results" && parts.length === 3) return only(method, ["GET"], () => readResult(gateway, ctx, name as string));
  return false;
}

async function only(method: string, allowed: string[], run: () => unknown): Promise<true> {
  if (!allowed.includes(method)) {
    throw new HttpError("METHOD_NOT_ALLOWED", `Use ${allowed.join(" or ")} on this path.`, { headers: { allow: allowed.join(", ") } });
  }
  await run();
  return true;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError("BAD_REQUEST", `The path segment "${segment.slice(0, 100)}" is not valid percent-encoding.`);
  }
}

/** Query parameters as the meta-tool's arguments (readInput reads numbers and booleans sent as strings). */
function queryArgs(url: URL, schema: InputSchema, rename: Record<string, string> = {}): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [key, value] of url.searchParams) {
    const name = rename[key] ?? key;
    if (name in schema.properties) args[name] = value;
  }
  return args;
}

function metaContext(gateway: Gateway, ctx: RequestContext, signal?: AbortSignal): MetaToolContext {
  return { core: gateway.core, session: gateway.principalSession(ctx.principal), origin: "rest", ...(signal ? { signal } : {}) };
}

/** Aborted when the client goes away before its answer, so the downstream call is cancelled too. */
function disconnectSignal(ctx: RequestContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.on("close", () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

async function listTools(gateway: Gateway, ctx: RequestContext): Promise<void> {
  const { core } = gateway;
  const schema = searchToolsMetaTool.definition.inputSchema;
  const q = ctx.url.searchParams.get("q");
  if (q !== null) {
    const input = readInput(schema, queryArgs(ctx.url, schema, { q: "query" })) as { query: string; limit: number; server?: string; detail: SearchDetail };
    const query = input.query.trim();
    if (!query) throw new HttpError("BAD_REQUEST", '"q" must not be empty: describe what you want to do in a few words.');
    await core.discovered();
    checkServer(gateway, input.server);
    // Saved skills are their principal's, as in MCP search_tools.
    const hits = core.catalog.search(query, { limit: input.limit, owner: ctx.principal, ...(input.server ? { server: input.server } : {}) });
    sendJson(ctx.res, 200, {
      tools: hits.map((hit) => ({
        ...describeEntry(hit.entry, input.detail),
        ...(Number.isFinite(hit.score) ? { score: Math.round(hit.score * 1000) / 1000 } : { exact: true }),
      })),
      count: hits.length,
      total: core.catalog.size,
      ...pending(gateway),
    });
    return;
  }
  const server = ctx.url.searchParams.get("server") ?? undefined;
  const detail = (ctx.url.searchParams.get("detail") ?? "name") as SearchDetail;
  if (!["name", "summary", "full"].includes(detail)) throw new HttpError("BAD_REQUEST", '"detail" must be one of "name", "summary", "full".');
  const limit = readInput(
    {
      type: "object",
      properties: { limit: { type: "integer", minimum: 1, maximum: MAX_LIST, default: MAX_LIST }, offset: { type: "integer", minimum: 0, default: 0 } },
    },
    {
      limit: ctx.url.searchParams.get("limit") ?? undefined,
      offset: ctx.url.searchParams.get("offset") ?? undefined,
    },
  ) as { limit: number; offset: number };
  await core.discovered();
  checkServer(gateway, server);
  const entries = core.catalog.entries(server);
  const page = entries.slice(limit.offset, limit.offset + limit.limit);
  sendJson(ctx.res, 200, {
    tools: page.map((entry) => (detail === "name" ? { name: entry.qualifiedName, signature: entry.signature } : describeEntry(entry, detail))),
    count: page.length,
    total: entries.length,
    ...(limit.offset + page.length < entries.length
      ? { next: `?offset=${limit.offset + page.length}&limit=${limit.limit}${server ? `&server=${encodeURIComponent(server)}` : ""}` }
      : {}),
    hint: "GET /v1/tools/{name} for the schema and TypeScript module; GET /v1/tools?q=... to search",
    ...pending(gateway),
  });
}

function pending(gateway: Gateway): { pending?: string[] } {
  const notes = gateway.core.pendingNote();
  return notes.length ? { pending: notes } : {};
}

function checkServer(gateway: Gateway, server: string | undefined): void {
  if (server === undefined || gateway.core.catalog.entries(server).length > 0) return;
  const status = gateway.core.status().find((s) => s.name === server);
  if (status && status.state !== "ready") {
    throw new HttpError("SERVER_UNAVAILABLE", `Server "${server}" is ${status.state}${status.error ? `: ${status.error}` : ""}.`, {
      headers: { "retry-after": "5" },
    });
  }
  throw new HttpError("NOT_FOUND", `No server named "${server.slice(0, 100)}". Servers: ${gateway.core.catalog.servers().join(", ") || "none"}.`);
}

function describeEntry(entry: CatalogEntry, detail: SearchDetail): Record<string, unknown> {
  return {
    name: entry.qualifiedName,
    server: entry.server,
    tool: entry.name,
    module: entry.moduleSpecifier,
    signature: entry.signature,
    ...(detail !== "name" && entry.summary ? { description: entry.summary } : {}),
    ...(detail === "full" ? { inputSchema: entry.tool.inputSchema } : {}),
  };
}

async function describeTool(gateway: Gateway, ctx: RequestContext, name: string): Promise<void> {
  const entry = await gateway.core.pipeline.resolve(name);
  const typescript = gateway.core.modules.get(entry.moduleSpecifier) ?? "";
  if (ctx.url.searchParams.get("format") === "ts") {
    sendText(ctx.res, typescript, "text/plain; charset=utf-8");
    return;
  }
  sendJson(ctx.res, 200, {
    name: entry.qualifiedName,
    server: entry.server,
    tool: entry.name,
    description: entry.tool.description ?? "",
    module: entry.moduleSpecifier,
    signature: entry.signature,
    inputSchema: entry.tool.inputSchema,
    ...(entry.tool.outputSchema ? { outputSchema: entry.tool.outputSchema } : {}),
    ...(entry.tool.annotations ? { annotations: entry.tool.annotations } : {}),
    typescript,
  });
}

function textOf(result: ToolResult): string {
  return (result.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
}

/** A result kept because it was too large: its handle and the preview text that explains how to read it. */
function spilled(result: ToolResult): { handle: string; text: string } | undefined {
  const text = textOf(result);
  const handle = /"(res_[0-9a-f]{12})"/.exec(text)?.[1];
  return handle ? { handle, text } : undefined;
}

/** Runs one downstream call as the principal's REST session; shared with the compat routes. */
export async function runCall(gateway: Gateway, ctx: RequestContext, call: { name: string; args: unknown }): Promise<void> {
  const { name, args } = call;
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    throw new HttpError("BAD_REQUEST", 'The body must be a JSON object of the tool\'s arguments, such as {"path": "README.md"}.');
  }
  ctx.log.tool = name.slice(0, 100);
  const session = gateway.principalSession(ctx.principal);
  const result = await gateway.core.callTool({ name, arguments: args ?? {}, origin: "rest", session, signal: disconnectSignal(ctx) });
  const limited = await limitResult(gateway.core, { tool: name, result, owner: session.id });
  const raw = ctx.url.searchParams.has("raw");
  if (result.isError) {
    sendJson(ctx.res, 422, {
      error: { code: "tool_error", message: textOf(result).slice(0, 4000) || `${name} reported an error without a message.` },
      ...(raw ? { result: limited } : {}),
    });
    return;
  }
  const kept = limited !== result ? spilled(limited) : undefined;
  sendJson(ctx.res, 200, { tool: name, ...(kept ? { spilled: kept } : { value: toolResultValue(result) }), ...(raw ? { result: limited } : {}) });
}

async function callTool(gateway: Gateway, ctx: RequestContext, name: string): Promise<void> {
  const body = await readJson(ctx.req, gateway.options.maxBodyBytes, { allowEmpty: true });
  await runCall(gateway, ctx, { name, args: body });
}

/** execute_code over REST; shared with the compat routes. */
export async function runExec(gateway: Gateway, ctx: RequestContext, body: unknown): Promise<void> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new HttpError("BAD_REQUEST", 'The body must be a JSON object: {"code": "export default 1 + 1", "timeoutMs": 30000}.');
  const input = readInput(executeCodeMetaTool.definition.inputSchema, body as Record<string, unknown>) as { code: string; timeoutMs: number };
  const result = await executeCodeMetaTool.run(input, metaContext(gateway, ctx, disconnectSignal(ctx)));
  const text = textOf(result);
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(text) as Record<string, unknown>;
  } catch {
    const kept = spilled(result);
    sendJson(ctx.res, result.isError ? 422 : 200, kept ? { spilled: kept } : { text });
    return;
  }
  if (!result.isError) {
    sendJson(ctx.res, 200, answer);
    return;
  }
  const { error, ...rest } = answer as { error?: { kind?: string; message?: string } };
  const kind = error?.kind ?? "runtime";
  const status = kind === "queue_full" ? 429 : kind === "invalid_request" ? 400 : kind === "timeout" ? 504 : 422;
  sendJson(withHeaders(ctx.res, status === 429 ? { "retry-after": "2" } : {}), status, {
    error: { code: kind === "queue_full" ? "busy" : "exec_error", ...error, message: error?.message ?? "The snippet failed." },
    ...rest,
  });
}

async function exec(gateway: Gateway, ctx: RequestContext): Promise<void> {
  await runExec(gateway, ctx, await readJson(ctx.req, gateway.options.maxBodyBytes));
}

async function readResult(gateway: Gateway, ctx: RequestContext, handle: string): Promise<void> {
  const schema = readResultMetaTool.definition.inputSchema;
  const input = readInput(schema, { ...queryArgs(ctx.url, schema), handle }) as { handle: string; op: string };
  const result = await readResultMetaTool.run(input as never, metaContext(gateway, ctx));
  const text = textOf(result);
  if (input.op === "stat") {
    sendJson(ctx.res, 200, JSON.parse(text));
    return;
  }
  sendJson(ctx.res, 200, { handle: input.handle, op: input.op, text });
}
