import { ADMIN_SCOPE, type CatalogEntry } from "@codemux/core";
import { REST_HINTS, searchCatalog } from "@codemux/server";
import { readJson } from "./body";
import type { Gateway, RequestContext } from "./context";
import { HttpError } from "./errors";
import { sendJson } from "./respond";
import { runCall, runExec } from "./rest";

/** describe_tools answers this many names at most. */
const MAX_DESCRIBE = 20;
const DESCRIPTION_CHARS = 200;

/**
 * Seed 002's daemon and passthru paths (`--compat-routes`), over the same gateway as /v1 and with the
 * same auth. Unlike 002, a body that is not JSON is a 400, never a silent `{}`.
 */
export async function handleCompat(gateway: Gateway, ctx: RequestContext, path: string): Promise<boolean> {
  const method = ctx.req.method ?? "GET";
  const services = gateway.core.servicesFor(REST_HINTS);
  const { readiness, access, pipeline } = services;
  const session = () => gateway.principalSession(ctx.identity);
  const post = () => readJson(ctx.req, gateway.options.maxBodyBytes, { allowEmpty: true }) as Promise<Record<string, unknown> | undefined>;
  const need = (allowed: string) => {
    if (method !== allowed) throw new HttpError("METHOD_NOT_ALLOWED", `Use ${allowed} on ${path}.`, { headers: { allow: allowed } });
  };
  if (path === "/retrieve_tools") {
    need("POST");
    const body = objectBody(await post());
    const query = typeof body.query === "string" ? body.query.trim() : "";
    if (!query || query.length > 500) throw new HttpError("BAD_REQUEST", '"query" is required: a few words (at most 500 characters) describing the task.');
    const limit = typeof body.limit === "number" && body.limit >= 1 ? Math.min(50, Math.floor(body.limit)) : 10;
    const { hits } = await searchCatalog(services, { query, limit }, session());
    sendJson(ctx.res, 200, { tools: hits.map((h) => dehydrated(h.entry)), count: hits.length });
    return true;
  }
  if (path === "/describe_tools") {
    need("POST");
    const body = objectBody(await post());
    const names = Array.isArray(body.names) ? body.names.filter((n): n is string => typeof n === "string") : [];
    if (names.length === 0 || names.length > MAX_DESCRIBE)
      throw new HttpError("BAD_REQUEST", `"names" must list 1 to ${MAX_DESCRIBE} tool names (server__tool).`);
    await readiness.discovered();
    const tools = [];
    for (const name of names) {
      try {
        const entry = access.catalog(session()).resolve(name);
        tools.push({ name: entry.qualifiedName, description: entry.tool.description ?? "", inputSchema: entry.tool.inputSchema });
      } catch (error) {
        tools.push({ name: name.slice(0, 200), error: (error as Error).message });
      }
    }
    sendJson(ctx.res, 200, { tools, count: tools.length });
    return true;
  }
  if (path === "/call") {
    need("POST");
    const body = objectBody(await post());
    if (typeof body.name !== "string") throw new HttpError("BAD_REQUEST", '"name" is required: the server__tool to call, with "args" its arguments.');
    await runCall(gateway, ctx, { name: body.name, args: body.args ?? {} });
    return true;
  }
  if (path === "/exec") {
    need("POST");
    await runExec(gateway, ctx, objectBody(await post()));
    return true;
  }
  if (path === "/tools") {
    need("GET");
    const q = ctx.url.searchParams.get("q")?.slice(0, 500).trim();
    await readiness.discovered();
    const entries = q ? (await searchCatalog(services, { query: q, limit: 50 }, session())).hits.map((h) => h.entry) : access.catalog(session()).entries();
    sendJson(ctx.res, 200, { tools: entries.map(dehydrated), count: entries.length, hint: "GET /tools/{name} for full inputSchema" });
    return true;
  }
  if (path.startsWith("/tools/")) {
    need("GET");
    await readiness.discovered();
    const entry = await pipeline.resolveFor(decodeURIComponent(path.slice("/tools/".length)), session());
    sendJson(ctx.res, 200, { name: entry.qualifiedName, description: entry.tool.description ?? "", inputSchema: entry.tool.inputSchema });
    return true;
  }
  if (path.startsWith("/call/")) {
    need("POST");
    const body = await post();
    // 002 takes `{ "args": {...} }`, or else the whole body as the arguments.
    const args = body && typeof body === "object" && !Array.isArray(body) && "args" in body ? body.args : body;
    await runCall(gateway, ctx, { name: decodeURIComponent(path.slice("/call/".length)), args: args ?? {} });
    return true;
  }
  if (path === "/restart" || path === "/reinit") {
    need("POST");
    gateway.requireScope(ctx, ADMIN_SCOPE, "Reloading the config");
    if (!gateway.options.reload) throw new HttpError("NOT_IMPLEMENTED", "This server cannot reload its config (it was started without a config file).");
    sendJson(ctx.res, 200, { ok: true, ...(await gateway.options.reload()) });
    return true;
  }
  return false;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError("BAD_REQUEST", "The body must be a JSON object.");
  return body as Record<string, unknown>;
}

/** 002's dehydrated shape: name, a short description, and params as `name: type*` joined with ` | ` (* = required). */
function dehydrated(entry: CatalogEntry): { name: string; description: string; params: string } {
  const schema = entry.tool.inputSchema as { properties?: Record<string, { type?: unknown; items?: { type?: unknown } }>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const params = Object.entries(schema.properties ?? {})
    .slice(0, 50)
    .map(([name, p]) => {
      const type = p.type === "array" ? `${typeof p.items?.type === "string" ? p.items.type : "any"}[]` : typeof p.type === "string" ? p.type : "any";
      return `${name}: ${type}${required.has(name) ? "*" : ""}`;
    })
    .join(" | ");
  const description = entry.tool.description ?? "";
  return {
    name: entry.qualifiedName,
    description: description.length > DESCRIPTION_CHARS ? `${description.slice(0, DESCRIPTION_CHARS - 1)}…` : description,
    params,
  };
}
