import { ADMIN_SCOPE, estimateTokens, isPrincipalId, joinedText, principalOfName, toolResultValue, type CatalogEntry, type InputSchema } from "@codemux/core";
import {
  CODE_META_TOOLS,
  REST_HINTS,
  callRequest,
  checkServer,
  executionBody,
  executionResult,
  keepIfLarge,
  keptNotice,
  keptStat,
  readInput,
  readKept,
  searchCatalog,
  type CodemuxServices,
  type LimitedResult,
  type ReadResultRequest,
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
  if (resource === "principals" && parts.length === 3) return only(method, ["DELETE"], () => forgetPrincipal(gateway, ctx, name as string));
  return false;
}

/**
 * `DELETE /v1/principals/{principal}` (admin): deletes what the gateway keeps for a principal (its kept
 * results, skills, jobs with their transcripts, audit lines), as `codemux forget` does on a stopped one.
 */
async function forgetPrincipal(gateway: Gateway, ctx: RequestContext, name: string): Promise<void> {
  gateway.requireScope(ctx, ADMIN_SCOPE, "Forgetting a principal");
  if (!isPrincipalId(name))
    throw new HttpError("BAD_REQUEST", `"${name.slice(0, 80)}" is not a principal: give its id as the audit log names it, such as token:ci.`);
  // `bob` is the token bob's, as in the config: forgetting it must not find nothing and say "0".
  const principal = principalOfName(name);
  const forgotten = await gateway.core.forget(principal);
  ctx.log.forgot = principal;
  sendJson(ctx.res, 200, { principal, forgotten });
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

/** codemux's services as REST answers with them: its hints name REST's own routes. */
function restServices(gateway: Gateway): CodemuxServices {
  return gateway.core.servicesFor(REST_HINTS);
}

/** The input schema of one of mode code's meta-tools: REST reads its query and body by the same schema. */
function schemaOf(name: string): InputSchema {
  const tool = CODE_META_TOOLS.find((t) => t.definition.name === name);
  if (!tool) throw new Error(`The code surface has no meta-tool "${name}".`);
  return tool.definition.inputSchema;
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
  const services = restServices(gateway);
  const q = ctx.url.searchParams.get("q");
  if (q !== null) {
    const schema = schemaOf("search_tools");
    const input = readInput(schema, queryArgs(ctx.url, schema, { q: "query" })) as { query: string; limit: number; server?: string; detail: SearchDetail };
    if (!input.query.trim()) throw new HttpError("BAD_REQUEST", '"q" must not be empty: describe what you want to do in a few words.');
    // Saved skills are their principal's, as in MCP search_tools.
    const answer = await searchCatalog(services, input, gateway.principalSession(ctx.identity));
    sendJson(ctx.res, 200, {
      tools: answer.hits.map((hit) => ({
        ...describeEntry(hit.entry, input.detail),
        ...(Number.isFinite(hit.score) ? { score: Math.round(hit.score * 1000) / 1000 } : { exact: true }),
      })),
      count: answer.hits.length,
      total: answer.tools,
      ...(answer.pending.length ? { pending: answer.pending } : {}),
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
  await services.readiness.discovered();
  const session = gateway.principalSession(ctx.identity);
  checkServer(services, server, session);
  const entries = services.access.catalog(session).entries(server);
  const page = entries.slice(limit.offset, limit.offset + limit.limit);
  const pending = services.readiness.pendingNote(services.access.serverFilter(session));
  sendJson(ctx.res, 200, {
    tools: page.map((entry) => (detail === "name" ? { name: entry.qualifiedName, signature: entry.signature } : describeEntry(entry, detail))),
    count: page.length,
    total: entries.length,
    ...(limit.offset + page.length < entries.length
      ? { next: `?offset=${limit.offset + page.length}&limit=${limit.limit}${server ? `&server=${encodeURIComponent(server)}` : ""}` }
      : {}),
    hint: "GET /v1/tools/{name} for the schema and TypeScript module; GET /v1/tools?q=... to search",
    ...(pending.length ? { pending } : {}),
  });
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
  const session = gateway.principalSession(ctx.identity);
  const entry = await gateway.core.resolve(name, session);
  const typescript = gateway.core.moduleSource(entry.moduleSpecifier, session) ?? "";
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

/** A result kept because it was too large, as REST shows it: the handle, its size, a preview, and how to read it here. */
function spilled(limited: Extract<LimitedResult, { kept: object }>, tool: string): Record<string, unknown> {
  const { kept } = limited;
  return {
    handle: kept.handle,
    autoSpilled: true,
    bytes: kept.bytes,
    lines: kept.lines,
    estimatedTokens: limited.estimatedTokens,
    ...limited.keys,
    expiresAt: new Date(kept.expiresAt).toISOString(),
    preview: limited.preview.text,
    text: joinedText(keptNotice(limited, tool, REST_HINTS)) ?? "",
  };
}

/** Runs one downstream call as the principal's REST session; shared with the compat routes. */
export async function runCall(gateway: Gateway, ctx: RequestContext, call: { name: string; args: unknown }): Promise<void> {
  const { name, args } = call;
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    throw new HttpError("BAD_REQUEST", 'The body must be a JSON object of the tool\'s arguments, such as {"path": "README.md"}.');
  }
  ctx.log.tool = name.slice(0, 100);
  const services = restServices(gateway);
  const session = gateway.principalSession(ctx.identity);
  const result = await services.pipeline.call(callRequest({ name, args: args ?? {} }, { session, origin: "rest", signal: disconnectSignal(ctx) }));
  const limited = await keepIfLarge(services, { tool: name, result, owner: session });
  const raw = ctx.url.searchParams.has("raw") ? { result: limited.kept ? keptNotice(limited, name, REST_HINTS) : limited.result } : {};
  if (result.isError) {
    sendJson(ctx.res, 422, {
      error: { code: "tool_error", message: (joinedText(result) ?? "").slice(0, 4000) || `${name} reported an error without a message.` },
      ...raw,
    });
    return;
  }
  sendJson(ctx.res, 200, { tool: name, ...(limited.kept ? { spilled: spilled(limited, name) } : { value: toolResultValue(result) }), ...raw });
}

async function callTool(gateway: Gateway, ctx: RequestContext, name: string): Promise<void> {
  const body = await readJson(ctx.req, gateway.options.maxBodyBytes, { allowEmpty: true });
  await runCall(gateway, ctx, { name, args: body });
}

/** execute_code over REST; shared with the compat routes. */
export async function runExec(gateway: Gateway, ctx: RequestContext, body: unknown): Promise<void> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new HttpError("BAD_REQUEST", 'The body must be a JSON object: {"code": "export default 1 + 1", "timeoutMs": 30000}.');
  const input = readInput(schemaOf("execute_code"), body as Record<string, unknown>) as { code: string; timeoutMs: number };
  const services = restServices(gateway);
  const session = gateway.principalSession(ctx.identity);
  const run = await services.snippets.execute(input.code, { timeoutMs: input.timeoutMs, session, signal: disconnectSignal(ctx) });
  const limited = await keepIfLarge(services, { tool: "execute_code", result: executionResult(run), owner: session });
  if (limited.kept) {
    sendJson(ctx.res, run.ok ? 200 : 422, { spilled: spilled(limited, "execute_code") });
    return;
  }
  const outcome = executionBody(run);
  const answer: Record<string, unknown> = { ...outcome, estimatedTokens: estimateTokens(JSON.stringify(outcome)) };
  if (run.ok) {
    sendJson(ctx.res, 200, answer);
    return;
  }
  const { error, ...rest } = answer;
  const kind = run.error?.kind ?? "runtime";
  const status = kind === "queue_full" ? 429 : kind === "invalid_request" ? 400 : kind === "timeout" ? 504 : 422;
  sendJson(withHeaders(ctx.res, status === 429 ? { "retry-after": "2" } : {}), status, {
    error: { code: kind === "queue_full" ? "busy" : "exec_error", ...(error as object), message: run.error?.message ?? "The snippet failed." },
    ...rest,
  });
}

async function exec(gateway: Gateway, ctx: RequestContext): Promise<void> {
  await runExec(gateway, ctx, await readJson(ctx.req, gateway.options.maxBodyBytes));
}

async function readResult(gateway: Gateway, ctx: RequestContext, handle: string): Promise<void> {
  const schema = schemaOf("read_result");
  const request = readInput(schema, { ...queryArgs(ctx.url, schema), handle }) as unknown as ReadResultRequest;
  const { results } = restServices(gateway);
  const session = gateway.principalSession(ctx.identity);
  const kept = await results.get(request.handle, session.id, session.principal);
  const text = await results.read(kept.handle, session.id);
  if (request.op === "stat") {
    sendJson(ctx.res, 200, keptStat(kept, text));
    return;
  }
  sendJson(ctx.res, 200, { handle: request.handle, op: request.op, text: readKept(kept, text, request) });
}
