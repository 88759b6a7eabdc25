import type { Logger, SessionInfo } from "@codemux/core";
import { summarize, type Catalog } from "@codemux/catalog";
import { NoSessionError, listDownstreamSkills, readDownstreamSkill, type DownstreamSkill } from "@codemux/pool";
import { BadRequestError, SkillReadError } from "../errors";
import type { Access } from "../policy/access";
import type { ToolScreen } from "../screen";
import type { ToolPool } from "../tool-pool";
import { SERVER_SKILL_DOCUMENT_PREFIX as DOCUMENT_PREFIX, SERVER_SKILLS_PREFIX } from "./names";

export interface ServerSkillsOptions {
  pool: Pick<ToolPool, "on" | "client">;
  catalog: Catalog;
  access: Access;
  logger: Logger;
  /** The scan (security.scan): a skill whose name or description it rates high is left out under quarantine. */
  screen?: ToolScreen | undefined;
}

/**
 * The skills of downstream servers (the `io.modelcontextprotocol/skills` extension), aggregated: listed as each
 * server connects or says its resources changed, put in search as kind "skill" under `<server>/<path>` (a skill's
 * identity is its server and URI, so two servers' skills of one name never shadow each other or a saved skill),
 * and read through read_module, each file checked against the server's listing.
 */
export class ServerSkills {
  readonly #skills = new Map<string, DownstreamSkill[]>();
  /** Bumped by each listing and removal of a server, so that a listing that ends after a newer one (or after removal) is dropped. */
  readonly #generation = new Map<string, number>();
  readonly #options: ServerSkillsOptions;

  constructor(options: ServerSkillsOptions) {
    this.#options = options;
    const { pool } = options;
    pool.on("tools", (server) => void this.#index(server));
    pool.on("removed", (server) => {
      this.#bump(server);
      this.#unindex(server);
    });
    pool.on("notification", (server, notification, owner) => {
      // The extension announces a changed skill set as a changed resource list; an instance's lists are the listing connection's.
      if (!owner && notification.method === "notifications/resources/list_changed") void this.#index(server);
    });
  }

  /** The skills of the servers `session` sees, by server. */
  list(session: SessionInfo): Array<{ server: string; skills: DownstreamSkill[] }> {
    return [...this.#skills]
      .filter(([server]) => this.#options.access.seesServer(session, server))
      .map(([server, skills]) => ({ server, skills }))
      .sort((a, b) => a.server.localeCompare(b.server));
  }

  /** The root listing's line, `mcp/server-skills  (5 skills of 2 servers)`; undefined when no server `session` sees offers any. */
  summary(session: SessionInfo): string | undefined {
    const servers = this.list(session);
    const count = servers.reduce((n, s) => n + s.skills.length, 0);
    if (count === 0) return undefined;
    return `${SERVER_SKILLS_PREFIX.slice(0, -1)}  (${count} skill${count === 1 ? "" : "s"} of ${servers.length} server${servers.length === 1 ? "" : "s"}: instructions, read with read_module)`;
  }

  /** What list_modules shows under `mcp/server-skills` (or one server's folder in it): one skill a line, with its description. */
  listing(specifier: string, session: SessionInfo): string {
    const server = specifier.slice(SERVER_SKILLS_PREFIX.length).split("/")[0] || undefined;
    const servers = this.list(session).filter((s) => server === undefined || s.server === server);
    if (servers.length === 0) return server === undefined ? "No server offers skills." : `No skills of a server named "${server}".`;
    return servers
      .flatMap((s) => s.skills.map((k) => `${SERVER_SKILLS_PREFIX}${s.server}/${k.path}\n  ${k.description.split("\n")[0]?.slice(0, 200) ?? ""}`))
      .join("\n");
  }

  /** True for a specifier under `mcp/server-skills/`, which `read` answers. */
  owns(specifier: string): boolean {
    return `${specifier}/`.startsWith(SERVER_SKILLS_PREFIX);
  }

  /** A skill's `SKILL.md` (or one of its files, by the path after the skill's), with where it is from; a sentence when there is none. */
  async read(specifier: string, session: SessionInfo): Promise<string> {
    const [server, ...rest] = specifier.slice(SERVER_SKILLS_PREFIX.length).split("/");
    const skills = server !== undefined && this.#options.access.seesServer(session, server) ? this.#skills.get(server) : undefined;
    const path = rest.join("/");
    // The longest skill path the specifier starts with: a skill may sit in a folder of another's name.
    const skill = skills?.filter((s) => path === s.path || path.startsWith(`${s.path}/`)).sort((a, b) => b.path.length - a.path.length)[0];
    if (!skills || !skill) {
      const known = this.list(session).flatMap((s) => s.skills.map((k) => `${SERVER_SKILLS_PREFIX}${s.server}/${k.path}`));
      throw new BadRequestError(
        `No skill "${specifier}". ${known.length ? `Skills of the servers: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", ..." : ""}.` : "No server offers skills."} search_tools finds them by task.`,
      );
    }
    const ref = path === skill.path ? undefined : path.slice(skill.path.length + 1);
    const shown = `${server}/${skill.path}`;
    let file: { uri: string; text: string };
    try {
      file = await readDownstreamSkill(await this.#client(server as string, session), skill, ref);
    } catch (error) {
      const reason = (error as Error).message.replace(/\.?$/, ".");
      throw new SkillReadError(shown, `${reason}${ref === undefined ? "" : ` Its files: ${skill.files.join(", ") || "none listed"}.`}`, { cause: error });
    }
    const header = [
      `<!-- Skill "${skill.name}" of server "${server}" (${file.uri}): instructions written by that server, not by codemux or the user. -->`,
      ...(ref === undefined && skill.files.length
        ? [`<!-- Its files: ${skill.files.map((f) => `read_module("${SERVER_SKILLS_PREFIX}${shown}/${f}")`).join(", ")} -->`]
        : []),
    ];
    return [...header, file.text].join("\n");
  }

  async #client(server: string, session: SessionInfo) {
    if (!this.#options.pool.client) throw new Error("this pool offers tools only");
    return this.#options.pool.client(server, session);
  }

  /** Lists one server's skills again and replaces what search had of them. */
  async #index(server: string): Promise<void> {
    const { pool, logger } = this.#options;
    if (!pool.client) return;
    const generation = this.#bump(server);
    let listed: Awaited<ReturnType<typeof listDownstreamSkills>>;
    try {
      listed = await listDownstreamSkills(await pool.client(server));
    } catch (error) {
      // A server with per-principal credentials lists no skills: its listing connection is the operator's.
      if (NoSessionError.isInstance(error)) return this.#unindex(server);
      logger.warn(`[${server}] could not list its skills: ${(error as Error).message}`);
      return;
    }
    if (this.#generation.get(server) !== generation) return;
    if (listed.leftOut > 0) logger.warn(`[${server}] ${listed.leftOut} of its skills were left out (invalid, unusable names, or too many)`);
    this.#unindex(server);
    const { screen } = this.#options;
    const skills = screen ? screen.items(server, { kind: "skills", items: listed.skills }) : listed.skills;
    if (skills.length === 0) return;
    this.#skills.set(server, skills);
    for (const skill of skills) {
      const specifier = `${SERVER_SKILLS_PREFIX}${server}/${skill.path}`;
      this.#options.catalog.setDocument({
        id: `${DOCUMENT_PREFIX}${server}/${skill.path}`,
        kind: "skill",
        qualifiedName: `${server}/${skill.path}`,
        server,
        name: skill.name,
        functionName: skill.name,
        moduleSpecifier: specifier,
        signature: `read_module("${specifier}")  instructions (SKILL.md)${skill.files.length ? ` with ${skill.files.length} file${skill.files.length === 1 ? "" : "s"}` : ""}`,
        summary: summarize(skill.description),
        // The name's words are searched as well as the description's ("pdf-forms" for "fill a pdf form").
        tool: { name: skill.name, description: `${skill.name.replaceAll(/[-_]/g, " ")} ${skill.description}`, inputSchema: { type: "object" } },
      });
    }
  }

  #bump(server: string): number {
    const next = (this.#generation.get(server) ?? 0) + 1;
    this.#generation.set(server, next);
    return next;
  }

  #unindex(server: string): void {
    for (const skill of this.#skills.get(server) ?? []) this.#options.catalog.removeDocument("skill", `${DOCUMENT_PREFIX}${server}/${skill.path}`);
    this.#skills.delete(server);
  }
}
