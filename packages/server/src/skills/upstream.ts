import type { SessionInfo } from "@codemux/core";
import { GetSkillRequestParamsSchema, ListSkillsRequestParamsSchema } from "@modelcontextprotocol/core/ext/skills";
import { ProtocolError, ProtocolErrorCode, type Server, type ServerContext } from "@modelcontextprotocol/server";
import { SKILLS_EXTENSION_ID, SKILLS_GET_METHOD, SKILLS_LIST_METHOD, type Skill } from "@modelcontextprotocol/server/ext/skills";
import { SAVED_SKILLS_ROOT, savedSkillFiles } from "./saved-entries";
import type { ServerSkills } from "./server-skills";
import type { Skill as SavedSkill } from "./skill";

/** Skills per `skills/list` page. */
export const SKILLS_PAGE_SIZE = 100;
/** A `skills/get` URI codemux looks at, at most. */
const MAX_URI_CHARS = 2048;
/** How long an answer waits for listings under way, at most: a slow server's listing does not hold every client's. */
const SETTLE_MS = 5_000;
/** What a 2026-07-28 client may keep a skills answer for: filtered per principal, so private. */
const CACHE_FIELDS = { ttlMs: 10_000, cacheScope: "private" } as const;

export interface UpstreamSkillsOptions {
  skills: Pick<ServerSkills, "shownEntries" | "shownEntry" | "settled">;
  /** The session as one request's client is. */
  session: (ctx: ServerContext) => SessionInfo;
  /** The session speaks 2026-07-28, whose skills answers carry `ttlMs` and `cacheScope`. */
  modern: boolean;
  /** codemux's saved skills the session may run (mode code, through execute_code); none when absent. */
  saved?: (session: SessionInfo) => readonly SavedSkill[];
}

/**
 * Serves the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on one session's MCP server: `skills/list`
 * and `skills/get` answer the skills of the downstream servers the session's policies show, each under
 * `skill://<server>/...` with the digests its server listed; their files are read with `resources/read` of those
 * URIs (mcp-features.ts routes them to their server); in mode code, codemux's saved skills too (saved-entries.ts).
 * See docs/design/skills.md.
 */
export function serveSkills(server: Server, { skills, session, modern, saved }: UpstreamSkillsOptions): void {
  const cache = modern ? CACHE_FIELDS : {};
  const savedEntries = (who: SessionInfo) => (saved ? savedSkillFiles(saved(who)).map((s) => s.entry) : []);
  server.setRequestHandler(SKILLS_LIST_METHOD, { params: ListSkillsRequestParamsSchema }, async (params, ctx) => {
    await settled(skills);
    const who = session(ctx);
    const all = [...skills.shownEntries(who), ...savedEntries(who)];
    const start = params.cursor === undefined ? 0 : pageStart(params.cursor, all.length);
    const page: Skill[] = all.slice(start, start + SKILLS_PAGE_SIZE);
    const next = start + SKILLS_PAGE_SIZE < all.length ? { nextCursor: String(start + SKILLS_PAGE_SIZE) } : {};
    return { skills: page, ...next, ...cache };
  });
  server.setRequestHandler(SKILLS_GET_METHOD, { params: GetSkillRequestParamsSchema }, async (params, ctx) => {
    await settled(skills);
    const uri = params.uri.slice(0, MAX_URI_CHARS);
    const who = session(ctx);
    const skill =
      uri.length !== params.uri.length
        ? undefined
        : uri.startsWith(SAVED_SKILLS_ROOT)
          ? savedEntries(who).find((entry) => entry.uri === uri)
          : await skills.shownEntry(uri, who);
    if (skill === undefined)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No skill is served at ${uri.slice(0, 300)}; skills/list shows the skills this client may use.`);
    return { skill, ...cache };
  });
  server.registerCapabilities({ extensions: { [SKILLS_EXTENSION_ID]: {} } });
}

/** A server's change reached the client as the notification codemux relayed: its new list is answered, not the one before. */
async function settled(skills: Pick<ServerSkills, "settled">): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([skills.settled(), new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_MS)))]);
  clearTimeout(timer);
}

/** Where a cursor this server gave starts; a cursor it did not give is refused. */
function pageStart(cursor: string, total: number): number {
  const start = /^\d{1,9}$/.test(cursor) ? Number(cursor) : Number.NaN;
  if (!(start > 0 && start < total && start % SKILLS_PAGE_SIZE === 0)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Unknown skills/list cursor.");
  return start;
}
