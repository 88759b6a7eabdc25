import type { CatalogEntry, SessionInfo } from "@codemux/core";
import type { Catalog, CatalogDocument, CatalogSearchHit } from "@codemux/catalog";
import { ServerUnavailableError } from "@codemux/pool";
import { MAX_QUERY_CHARS } from "./defaults";
import { BadRequestError, UnknownServerError } from "./errors";
import { isServerSkillPath } from "./modules/namespace";
import { unavailable } from "./pipeline/pipeline";
import type { Access } from "./policy/access";
import type { Readiness } from "./readiness";
import type { ToolPool } from "./tool-pool";

export type SearchDetail = "name" | "summary" | "full";

export interface SearchRequest {
  query: string;
  limit?: number;
  server?: string;
  detail?: SearchDetail;
}

/** A search's outcome, before any front end writes it out. */
export interface SearchAnswer {
  query: string;
  /** Ranked, best first: tools, and resources, prompts and skills marked by kind, with their scores (an exact name is infinitely good). */
  hits: CatalogSearchHit[];
  /** Tools and servers in the whole catalog, for "browse N tools of M servers". */
  tools: number;
  servers: number;
  /** Notes on servers still connecting, whose tools may be missing or from the last run. */
  pending: string[];
}

/**
 * The catalog search every front end runs (search_tools, REST, dispatch, the CLI): the query checked,
 * servers waited for during the first seconds, the hits ranked, another principal's skills and the
 * tools its policy hides left out.
 */
export async function searchCatalog(
  deps: { catalog: Catalog; access: Access; readiness: Readiness; pool: Pick<ToolPool, "status"> },
  request: SearchRequest,
  session?: SessionInfo,
): Promise<SearchAnswer> {
  const { readiness } = deps;
  const catalog = deps.access.catalog(session);
  const query = checkQuery(request.query);
  await readiness.discovered();
  checkServer(deps, request.server, session);
  const hits = catalog.search(query, {
    limit: request.limit ?? 10,
    ...(request.server ? { server: request.server } : {}),
    // Saved skills belong to a principal: another's are left out (and, with no session, every principal's).
    ...(session ? { owner: session.principal } : {}),
  });
  return { query, hits, tools: catalog.size, servers: catalog.servers().length, pending: readiness.pendingNote(deps.access.serverFilter(session)) };
}

/**
 * Nothing for a server the session sees tools of (or none named); else why not: it is down (and why), or
 * there is no such server (also for one its policy hides).
 */
export function checkServer(
  deps: { catalog: Catalog; access: Access; pool: Pick<ToolPool, "status"> },
  server: string | undefined,
  session: SessionInfo | undefined,
): void {
  const catalog = deps.access.catalog(session);
  if (server === undefined || catalog.entries(server).length > 0) return;
  const down = session === undefined || deps.access.seesServer(session, server) ? unavailable(deps.pool, server) : undefined;
  if (down) throw new ServerUnavailableError(down.server, down.reason);
  throw new UnknownServerError(server, catalog.servers());
}

/** The query as the ranker takes it, or a sentence saying why not. */
export function checkQuery(query: string): string {
  // Ranking a query costs time on the shared event loop in proportion to its length.
  if (query.length > MAX_QUERY_CHARS) throw new BadRequestError(`"query" is ${query.length} characters long; describe the task in at most ${MAX_QUERY_CHARS}.`);
  const trimmed = query.trim();
  if (!trimmed) throw new BadRequestError('"query" must not be empty: describe what you want to do in a few words.');
  return trimmed;
}

/** What a tool does to data, from its server's annotations (hints, not guarantees): read-only, writes, or destructive. */
export function intentOf(annotations: { readOnlyHint?: boolean; destructiveHint?: boolean } | undefined): "read-only" | "writes" | "destructive" | undefined {
  if (!annotations) return undefined;
  if (annotations.readOnlyHint === true) return "read-only";
  // The MCP default for a tool that is not read-only is destructive unless it says otherwise.
  if (annotations.destructiveHint === false) return "writes";
  if (annotations.readOnlyHint === false || annotations.destructiveHint === true) return "destructive";
  return undefined;
}

/** The kind a hit shows: a resource, prompt or server's skill says what it is (a saved skill's name already does); a tool says what it does to data. */
export function hitKind(entry: CatalogEntry | CatalogDocument): string | undefined {
  const kind = "kind" in entry ? entry.kind : undefined;
  if (kind === "resource" || kind === "prompt") return kind;
  if (kind === "skill" && isServerSkillPath(entry.moduleSpecifier)) return "skill";
  return kind === undefined ? intentOf(entry.tool.annotations) : undefined;
}
