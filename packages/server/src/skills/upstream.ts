import type { SessionInfo } from "@codemux/core";
import { GetSkillRequestParamsSchema, ListSkillsRequestParamsSchema } from "@modelcontextprotocol/core/ext/skills";
import { ProtocolError, ProtocolErrorCode, type Server, type ServerContext } from "@modelcontextprotocol/server";
import { SKILLS_EXTENSION_ID, SKILLS_GET_METHOD, SKILLS_LIST_METHOD, type Skill } from "@modelcontextprotocol/server/ext/skills";
import type { ServerSkills } from "./server-skills";

/** Skills per `skills/list` page. */
export const SKILLS_PAGE_SIZE = 100;
/** A `skills/get` URI codemux looks at, at most. */
const MAX_URI_CHARS = 2048;
/** What a 2026-07-28 client may keep a skills answer for: filtered per principal, so private. */
const CACHE_FIELDS = { ttlMs: 10_000, cacheScope: "private" } as const;

export interface UpstreamSkillsOptions {
  skills: Pick<ServerSkills, "shownEntries" | "shownEntry">;
  /** The session as one request's client is. */
  session: (ctx: ServerContext) => SessionInfo;
  /** The session speaks 2026-07-28, whose skills answers carry `ttlMs` and `cacheScope`. */
  modern: boolean;
}

/**
 * Serves the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on one session's MCP server: `skills/list`
 * and `skills/get` answer the skills of the downstream servers the session's policies show, each under
 * `skill://<server>/...` with the digests its server listed; their files are read with `resources/read` of those
 * URIs (mcp-features.ts routes them to their server). See docs/design/skills.md.
 */
export function serveSkills(server: Server, { skills, session, modern }: UpstreamSkillsOptions): void {
  const cache = modern ? CACHE_FIELDS : {};
  server.setRequestHandler(SKILLS_LIST_METHOD, { params: ListSkillsRequestParamsSchema }, async (params, ctx) => {
    const all = skills.shownEntries(session(ctx));
    const start = params.cursor === undefined ? 0 : pageStart(params.cursor, all.length);
    const page: Skill[] = all.slice(start, start + SKILLS_PAGE_SIZE);
    const next = start + SKILLS_PAGE_SIZE < all.length ? { nextCursor: String(start + SKILLS_PAGE_SIZE) } : {};
    return { skills: page, ...next, ...cache };
  });
  server.setRequestHandler(SKILLS_GET_METHOD, { params: GetSkillRequestParamsSchema }, async (params, ctx) => {
    const uri = params.uri.slice(0, MAX_URI_CHARS);
    const skill = uri.length === params.uri.length ? await skills.shownEntry(uri, session(ctx)) : undefined;
    if (skill === undefined)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No skill is served at ${uri.slice(0, 300)}; skills/list shows the skills this client may use.`);
    return { skill, ...cache };
  });
  server.registerCapabilities({ extensions: { [SKILLS_EXTENSION_ID]: {} } });
}

/** Where a cursor this server gave starts; a cursor it did not give is refused. */
function pageStart(cursor: string, total: number): number {
  const start = /^\d{1,9}$/.test(cursor) ? Number(cursor) : Number.NaN;
  if (!(start > 0 && start < total && start % SKILLS_PAGE_SIZE === 0)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Unknown skills/list cursor.");
  return start;
}
