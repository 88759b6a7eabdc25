import type { Logger, SessionInfo } from "@codemux/core";
import { summarize, type Catalog } from "@codemux/catalog";
import { NoSessionError, getDownstreamSkill, listDownstreamSkills, readDownstreamSkill, type DownstreamSkill } from "@codemux/pool";
import type { Skill } from "@modelcontextprotocol/server/ext/skills";
import { isSkillUri, serverUriOwner, shownServerUri } from "../app-uris";
import { BadRequestError, SkillReadError } from "../errors";
import type { Access } from "../policy/access";
import { heldSkillFileReason, type ToolScreen } from "../screen";
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
  /** Listings under way: a client told of a change (the relayed resources/list_changed) is answered after them, not from the old list. */
  readonly #listing = new Set<Promise<void>>();
  readonly #options: ServerSkillsOptions;

  constructor(options: ServerSkillsOptions) {
    this.#options = options;
    const { pool } = options;
    pool.on("tools", (server) => this.#listAgain(server));
    pool.on("removed", (server) => {
      this.#bump(server);
      this.#unindex(server);
    });
    pool.on("notification", (server, notification, owner) => {
      // The extension announces a changed skill set as a changed resource list; an instance's lists are the listing connection's.
      if (!owner && notification.method === "notifications/resources/list_changed") this.#listAgain(server);
    });
  }

  /** The skills of the servers `session` sees, by server. */
  list(session: SessionInfo): Array<{ server: string; skills: DownstreamSkill[] }> {
    return [...this.#skills]
      .filter(([server]) => this.#options.access.seesServer(session, server))
      .map(([server, skills]) => ({ server, skills }))
      .sort((a, b) => a.server.localeCompare(b.server));
  }

  /** Resolves once the listings under way when it is called have ended. */
  async settled(): Promise<void> {
    await Promise.all(this.#listing);
  }

  /**
   * The skills of the servers `session` sees as a client of the skills extension is shown them: each `skill://` URI
   * (the entry's and its files') under its server, `skill://<server>/<the rest>`, the rest of the entry (frontmatter,
   * digests, sizes) as the server listed it. A skill under another scheme has no such name and is left out.
   */
  shownEntries(session: SessionInfo): Skill[] {
    return this.list(session).flatMap(({ server, skills }) => skills.flatMap((skill) => shownEntry(server, skill.entry) ?? []));
  }

  /** The entry of the skill whose `SKILL.md` a client knows as `uri` (`skill://<server>/...`), listed or not (the server's skills/get); undefined when none. */
  async shownEntry(uri: string, session: SessionInfo): Promise<Skill | undefined> {
    const owner = serverUriOwner(uri);
    if (owner === undefined || !isSkillUri(uri) || !this.#options.access.seesServer(session, owner.server)) return undefined;
    const listed = this.#skills.get(owner.server)?.find((skill) => skill.uri === owner.uri);
    if (listed) return shownEntry(owner.server, listed.entry);
    // Any failure (no such skill, a server that does not serve the extension, a timeout) is a skill not served.
    const entry = await this.#client(owner.server, session)
      .then((client) => getDownstreamSkill(client, owner.uri))
      .catch(() => undefined);
    return entry && entry.uri === owner.uri ? shownEntry(owner.server, entry) : undefined;
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
    const screened = this.#options.screen?.skillFile(server as string, file) ?? { text: file.text, held: false, name: "", findings: [] };
    if (screened.held) throw new SkillReadError(shown, heldSkillFileReason(file.uri, screened));
    const header = [
      `<!-- Skill "${skill.name}" of server "${server}" (${file.uri}): instructions written by that server, not by codemux or the user. -->`,
      ...(ref === undefined && skill.files.length
        ? [`<!-- Its files: ${skill.files.map((f) => `read_module("${SERVER_SKILLS_PREFIX}${shown}/${f}")`).join(", ")} -->`]
        : []),
    ];
    return [...header, screened.text].join("\n");
  }

  async #client(server: string, session: SessionInfo) {
    if (!this.#options.pool.client) throw new Error("this pool offers tools only");
    return this.#options.pool.client(server, session);
  }

  #listAgain(server: string): void {
    const listing = this.#index(server);
    this.#listing.add(listing);
    void listing.finally(() => this.#listing.delete(listing));
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

/** A downstream skill's entry as a client is shown it (see `ServerSkills.shownEntries`); undefined for a skill not under `skill://`. */
function shownEntry(server: string, entry: Skill): Skill | undefined {
  if (!isSkillUri(entry.uri)) return undefined;
  const resources = entry.resources === "dynamic" ? entry.resources : entry.resources.map((file) => ({ ...file, uri: shownServerUri(server, file.uri) }));
  return { ...entry, uri: shownServerUri(server, entry.uri), resources };
}
