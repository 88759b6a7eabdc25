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

/** One compat request as its route sees it: the gateway's services for REST, the caller's session, its body. */
interface CompatCall {
  gateway: Gateway;
  ctx: RequestContext;
  path: string;
  services: ReturnType<Gateway["core"]["servicesFor"]>;
  session(): ReturnType<Gateway["principalSession"]>;
  post(): Promise<Record<string, unknown> | undefined>;
}

interface CompatRoute {
  method: "GET" | "POST";
  run(call: CompatCall): Promise<void>;
}

const ROUTES: Record<string, CompatRoute> = {
  "/retrieve_tools": { method: "POST", run: retrieveTools },
  "/describe_tools": { method: "POST", run: describeTools },
  "/call": {
    method: "POST",
    run: async ({ gateway, ctx, post }) => {
      const body = objectBody(await post());
      if (typeof body.name !== "string") throw new HttpError("BAD_REQUEST", '"name" is required: the server__tool to call, with "args" its arguments.');
      await runCall(gateway, ctx, { name: body.name, args: body.args ?? {} });
    },
  },
  "/exec": { method: "POST", run: async ({ gateway, ctx, post }) => runExec(gateway, ctx, objectBody(await post())) },
  "/tools": { method: "GET", run: listTools },
  "/restart": { method: "POST", run: reload },
  "/reinit": { method: "POST", run: reload },
};

/** `/tools/{name}`: one tool with its full input schema. */
const TOOL_ROUTE: CompatRoute = {
  method: "GET",
  run: async ({ ctx, path, services, session }) => {
    await services.readiness.discovered();
    const entry = await services.pipeline.resolveFor(decodeURIComponent(path.slice("/tools/".length)), session());
    sendJson(ctx.res, 200, { name: entry.qualifiedName, description: entry.tool.description ?? "", inputSchema: entry.tool.inputSchema });
  },
};

/** `/call/{name}`: 002 takes `{ "args": {...} }`, or else the whole body as the arguments. */
const CALL_ROUTE: CompatRoute = {
  method: "POST",
  run: async ({ gateway, ctx, path, post }) => {
    const body = await post();
    const args = body && typeof body === "object" && !Array.isArray(body) && "args" in body ? body.args : body;
    await runCall(gateway, ctx, { name: decodeURIComponent(path.slice("/call/".length)), args: args ?? {} });
  },
};

function compatRoute(path: string): CompatRoute | undefined {
  if (Object.hasOwn(ROUTES, path)) return ROUTES[path];
  if (path.startsWith("/tools/")) return TOOL_ROUTE;
  if (path.startsWith("/call/")) return CALL_ROUTE;
  return undefined;
}

/**
 * Seed 002's daemon and passthru paths (`--compat-routes`), over the same gateway as /v1 and with the
 * same auth. Unlike 002, a body that is not JSON is a 400, never a silent `{}`.
 */
export async function handleCompat(gateway: Gateway, ctx: RequestContext, path: string): Promise<boolean> {
  const route = compatRoute(path);
  if (!route) return false;
  if ((ctx.req.method ?? "GET") !== route.method)
    throw new HttpError("METHOD_NOT_ALLOWED", `Use ${route.method} on ${path}.`, { headers: { allow: route.method } });
  await route.run({
    gateway,
    ctx,
    path,
    services: gateway.core.servicesFor(REST_HINTS),
    session: () => gateway.principalSession(ctx.identity),
    post: () => readJson(ctx.req, gateway.options.maxBodyBytes, { allowEmpty: true }) as Promise<Record<string, unknown> | undefined>,
  });
  return true;
}

/** `/retrieve_tools`: the tools a few words find, dehydrated. */
async function retrieveTools({ ctx, services, session, post }: CompatCall): Promise<void> {
  const body = objectBody(await post());
  const query = typeof body.query === "string" ? body.query.trim() : "";
  if (!query || query.length > 500) throw new HttpError("BAD_REQUEST", '"query" is required: a few words (at most 500 characters) describing the task.');
  const limit = typeof body.limit === "number" && body.limit >= 1 ? Math.min(50, Math.floor(body.limit)) : 10;
  const { hits } = await searchCatalog(services, { query, limit }, session());
  sendJson(ctx.res, 200, { tools: hits.map((h) => dehydrated(h.entry)), count: hits.length });
}

/** `/describe_tools`: the named tools with their input schemas; a name that does not resolve says why. */
async function describeTools({ ctx, services, session, post }: CompatCall): Promise<void> {
  const body = objectBody(await post());
  const names = Array.isArray(body.names) ? body.names.filter((n): n is string => typeof n === "string") : [];
  if (names.length === 0 || names.length > MAX_DESCRIBE)
    throw new HttpError("BAD_REQUEST", `"names" must list 1 to ${MAX_DESCRIBE} tool names (server__tool).`);
  await services.readiness.discovered();
  const tools = [];
  for (const name of names) {
    try {
      const entry = services.access.catalog(session()).resolve(name);
      tools.push({ name: entry.qualifiedName, description: entry.tool.description ?? "", inputSchema: entry.tool.inputSchema });
    } catch (error) {
      tools.push({ name: name.slice(0, 200), error: (error as Error).message });
    }
  }
  sendJson(ctx.res, 200, { tools, count: tools.length });
}

/** `/tools`: every tool the caller may use, or those `q` finds, dehydrated. */
async function listTools({ ctx, services, session }: CompatCall): Promise<void> {
  const q = ctx.url.searchParams.get("q")?.slice(0, 500).trim();
  await services.readiness.discovered();
  const entries = q
    ? (await searchCatalog(services, { query: q, limit: 50 }, session())).hits.map((h) => h.entry)
    : services.access.catalog(session()).entries();
  sendJson(ctx.res, 200, { tools: entries.map(dehydrated), count: entries.length, hint: "GET /tools/{name} for full inputSchema" });
}

/** `/restart`, `/reinit`: reloads the config (an admin's). */
async function reload({ gateway, ctx }: CompatCall): Promise<void> {
  gateway.requireScope(ctx, ADMIN_SCOPE, "Reloading the config");
  if (!gateway.options.reload) throw new HttpError("NOT_IMPLEMENTED", "This server cannot reload its config (it was started without a config file).");
  sendJson(ctx.res, 200, { ok: true, ...(await gateway.options.reload()) });
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
