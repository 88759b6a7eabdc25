import type { SessionInfo } from "@codemux/core";
import type { CodemuxServices } from "../services";

/** One server's instructions at most, in characters: a server's own words for its tools, not a manual. */
export const SERVER_INSTRUCTIONS_CHARS = 1000;
/** All servers' instructions together at most: they go to the model before every conversation. */
export const ALL_INSTRUCTIONS_CHARS = 4000;

/**
 * The downstream servers' own instructions (what each said at `initialize` or `server/discover`),
 * for the servers a session sees, each named and bounded: a server's text is its own, untrusted, so
 * it is attributed, stripped of control characters and cut rather than trusted to be short.
 */
export function serverInstructions(servers: readonly string[], instructionsOf: (server: string) => string | undefined): string {
  const parts: string[] = [];
  let left = ALL_INSTRUCTIONS_CHARS;
  for (const server of servers) {
    const raw = instructionsOf(server);
    if (!raw || left <= 0) continue;
    // Control characters (escape sequences, NULs) go; line breaks stay, as the server wrote them.
    const text = raw
      .slice(0, SERVER_INSTRUCTIONS_CHARS * 2)
      .replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, " ")
      .trim();
    if (!text) continue;
    const room = Math.min(SERVER_INSTRUCTIONS_CHARS, left);
    const shown = text.length > room ? `${text.slice(0, room - 1)}…` : text;
    left -= shown.length;
    parts.push(`[${server}] ${shown}`);
  }
  return parts.length ? `What the servers say about their own tools:\n${parts.join("\n")}` : "";
}

/**
 * A surface's instructions for one session: its own words (`intro`), the servers the session sees,
 * and those servers' own instructions. Known at once from the config and the catalog cache: a
 * client asks at initialize, before servers have connected.
 */
export function sessionInstructions(
  services: Pick<CodemuxServices, "access" | "pool" | "readiness" | "mask">,
  session: SessionInfo | undefined,
  intro: string | undefined,
): string | undefined {
  const servers = services.access.servers(session, services.pool.names);
  const own = [intro ?? "", intro && servers.length ? `Servers: ${servers.join(", ")}.` : ""].join(" ").trim();
  const theirs = serverInstructions(servers, (server) => {
    const said = services.readiness.instructions(server);
    return said === undefined ? undefined : services.mask.text(said);
  });
  return [own, theirs].filter(Boolean).join("\n\n") || undefined;
}
