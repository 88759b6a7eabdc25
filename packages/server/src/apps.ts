import {
  APP_ORIGIN,
  appResourceUri,
  declaresApps,
  isAppOnly,
  type CallOrigin,
  type CatalogEntry,
  type RequestContext,
  type SessionInfo,
  type Surface,
  type ToolDefinition,
  type ToolResult,
} from "@codemux/core";
import { shownAppUri } from "./app-uris";
import { downstreamTaskHandling } from "./downstream-tasks";
import { missingCapabilityUp, passedUp } from "./input-required";
import { callRequest } from "./pipeline/call-request";
import { limitResult } from "./render/limit-result";
import { errorResult } from "./render/text";
import type { CodemuxServices } from "./services";

/**
 * MCP Apps (`io.modelcontextprotocol/ui`) through codemux: a downstream's `ui://` URIs are shown as
 * `ui://<server>/<the rest>` (still `ui://`, which hosts require; unique, since server names are), and
 * tools that show an app are offered to hosts that declared the extension in every mode. See docs/design/apps.md.
 */
/** App-bearing tools listed beside the meta-tools of modes code and dispatch, at most (the rest stay reachable through search). */
export const MAX_LISTED_APP_TOOLS = 64;

type AppServices = CodemuxServices;

/** Whether a session's client (as this request declared it, on 2026-07-28) renders MCP Apps. */
export function rendersApps(session: SessionInfo | undefined): boolean {
  return declaresApps(session?.peer?.capabilities());
}

/** A tool as a client lists it: its codemux name, its server named in its description, its app's URI (both keys of `_meta`) in codemux's namespace. */
export function listedTool(entry: CatalogEntry): ToolDefinition {
  const { tool, server } = entry;
  const listed: ToolDefinition = { ...tool, name: entry.qualifiedName, description: `[${server}] ${tool.description ?? ""}`.trim() };
  if (appResourceUri(tool) === undefined) return listed;
  const meta = { ...(tool._meta as Record<string, unknown>) };
  const ui = meta.ui as Record<string, unknown> | undefined;
  if (typeof ui?.resourceUri === "string") meta.ui = { ...ui, resourceUri: shownAppUri(server, ui.resourceUri) };
  if (typeof meta["ui/resourceUri"] === "string") meta["ui/resourceUri"] = shownAppUri(server, meta["ui/resourceUri"]);
  listed._meta = meta;
  return listed;
}

/** The tools only an app may call that `session`'s grant shows (none to a client that does not render apps). */
export function appOnlyTools(services: Pick<AppServices, "catalog" | "access">, session: SessionInfo | undefined): CatalogEntry[] {
  if (!rendersApps(session)) return [];
  const grant = session === undefined ? undefined : services.access.grant(session);
  return services.catalog.appTools().filter((entry) => grant === undefined || grant.sees(entry.qualifiedName));
}

/**
 * What modes code and dispatch list beside their meta-tools to a host that renders apps: the tools that
 * show an app (the host renders it when the model calls one) and the tools only an app may call (the host
 * keeps them from the model, as the extension bids it), as the session's policy shows them, bounded.
 */
export function appToolsBeside(services: Pick<AppServices, "catalog" | "access">, session: SessionInfo | undefined): CatalogEntry[] {
  if (!rendersApps(session)) return [];
  const showing = services.access
    .catalog(session)
    .entries()
    .filter((entry) => appResourceUri(entry.tool) !== undefined);
  return [...showing, ...appOnlyTools(services, session)].slice(0, MAX_LISTED_APP_TOOLS);
}

/** Whether an app may call the tool: `_meta.ui.visibility` absent (model and app) or naming "app". */
function callableByApps(tool: ToolDefinition): boolean {
  const visibility = (tool._meta as { ui?: { visibility?: unknown } } | undefined)?.ui?.visibility;
  return !Array.isArray(visibility) || visibility.includes("app");
}

/**
 * The downstream tool a host's direct call means, and whether only an app can have made it, for a host that
 * renders apps. A tool listed to it by its codemux name is that tool. An app calls its own server's tools by
 * their own names, which only an app does (the model is shown codemux's names): such a bare name means the tool
 * of that name of the one server whose app the session's host has read; none, or several, is a name that does not exist.
 */
export function appCallTarget(services: AppServices, name: string, session: SessionInfo): { name: string; app: boolean } | undefined {
  const listed = services.access.catalog(session).get(name) ?? appOnlyTools(services, session).find((entry) => entry.qualifiedName === name);
  if (listed !== undefined) return { name, app: isAppOnly(listed.tool) };
  const read = services.features.appServersRead(session);
  if (read.size === 0) return undefined;
  const mine = [...services.access.catalog(session).entries(), ...appOnlyTools(services, session)].filter(
    (entry) => entry.name === name && read.has(entry.server) && callableByApps(entry.tool),
  );
  return mine.length === 1 && mine[0] !== undefined ? { name: mine[0].qualifiedName, app: true } : undefined;
}

/** A host's direct call of one downstream tool, through the pipeline, answered as passthrough answers; an app's call has origin `app`. */
export async function callListedTool(
  services: AppServices,
  { name, args, request, origin }: { name: string; args: Record<string, unknown>; request: RequestContext; origin: CallOrigin },
): Promise<ToolResult> {
  const target = rendersApps(request.session) ? appCallTarget(services, name, request.session) : undefined;
  const called = target?.name ?? name;
  try {
    const call = callRequest({ name: called, args, origin: target?.app ? APP_ORIGIN : origin }, request);
    const handling = downstreamTaskHandling(services, call, request);
    if (handling !== undefined) call.downstreamTask = handling;
    const result = await services.pipeline.call(call);
    const limited = limitResult(services, { tool: called, result, owner: request.session });
    return limited instanceof Promise ? await limited : limited;
  } catch (error) {
    return passedUp(error, { tool: name, request, states: services.requestStates }) ?? missingCapabilityUp(error, request) ?? errorResult(error, services);
  }
}

/**
 * A mode that hides downstream tools behind meta-tools (code, dispatch), made to list the app-bearing tools
 * beside them to a host that renders apps and to take the host's direct calls of those (and its apps' calls);
 * unchanged for any other client.
 */
export function besideApps(services: AppServices, surface: Surface, { origin, own }: { origin: CallOrigin; own: (name: string) => boolean }): Surface {
  return {
    name: surface.name,
    listChanges: surface.listChanges,
    instructions: (session) => surface.instructions(session),
    listTools: async (session) => {
      const own = await surface.listTools(session);
      if (!rendersApps(session)) return own;
      await services.readiness.discovered();
      return [...own, ...appToolsBeside(services, session).map(listedTool)];
    },
    callTool: (name, args, request) => {
      if (!rendersApps(request.session) || own(name)) return surface.callTool(name, args, request);
      const target = appCallTarget(services, name, request.session);
      const beside = target !== undefined && (target.app || appToolsBeside(services, request.session).some((entry) => entry.qualifiedName === target.name));
      return beside ? callListedTool(services, { name, args, request, origin }) : surface.callTool(name, args, request);
    },
  };
}
