import { BRIDGE_SPECIFIER, MODULE_ROOT, SEPARATOR, SERVERS_PREFIX, type CatalogEntry, type SessionInfo } from "@codemux/core";
import type { Catalog } from "@codemux/catalog";
import type { ModuleTree, ToolVisibility } from "@codemux/codegen";
import type { ServerStatus } from "@codemux/pool";
import { BadRequestError } from "../errors";
import type { Access } from "../policy/access";
import type { ListedSkill, SkillLibrary } from "../skills/library";
import { SERVER_SKILLS_PREFIX, SKILLS_PREFIX } from "../skills/names";
import type { ServerSkills } from "../skills/server-skills";
import { RESOURCES_SPECIFIER, isResourceCall, resourceCall, resourcesModule, type ResourceReader } from "./resources";
import { similarModules } from "./similar";

/** Answers a module specifier with its TypeScript source, or undefined when it is not one of its modules. */
export type ModuleSource = (specifier: string, session?: SessionInfo) => string | undefined;

/** One downstream server's skills as a listing shows them. */
export interface ServerSkillsListed {
  server: string;
  skills: Array<{ path: string; description: string }>;
}

/** What list_modules shows for a path, before any front end writes it out. */
export type ModuleListing =
  /** `mcp`: every server (with its tool count), the servers that are down and why, the principal's skills, and how many skills the servers offer. */
  | {
      kind: "root";
      servers: Array<{ name: string; tools: number }>;
      down: ServerStatus[];
      skills: ListedSkill[];
      serverSkills: { skills: number; servers: number };
    }
  /** `mcp/skills`: the principal's skills and the project's. */
  | { kind: "skills"; skills: ListedSkill[] }
  /** `mcp/server-skills` (or one server's folder in it): the skills of the servers the session sees; `server` when one was asked for. */
  | { kind: "server-skills"; server?: string; servers: ServerSkillsListed[] }
  /** `mcp/servers/<server>`: its tools. */
  | { kind: "server"; specifier: string; entries: CatalogEntry[] }
  /** Any other path with modules under it. */
  | { kind: "modules"; specifiers: string[] };

export interface ModuleNamespaceOptions {
  /** The `servers/` and `bridge` mounts: the generated tool wrappers. */
  tree: ModuleTree;
  catalog: Catalog;
  /** What each session may see: the modules of tools its policy hides do not exist for it. */
  access: Access;
  /** The `skills/` mount: each principal's saved skills and the project's. */
  skills: SkillLibrary;
  /** The `server-skills/` mount: downstream servers' skills, read from their servers. */
  serverSkills: Pick<ServerSkills, "list" | "read">;
  /** The `resources` mount's host calls. */
  resources: ResourceReader;
  /** The sandbox's host-call global, which the generated modules call. */
  hostCallGlobal: string;
  /** The servers' states, for the listing of the ones that are down. */
  status(): ServerStatus[];
  /** More modules (an embedder's), asked last. */
  extra?: readonly ModuleSource[];
}

/**
 * The one owner of the `mcp/*` namespace that snippets import from and `list_modules` / `read_module`
 * show: `mcp/servers/...` and `mcp/bridge` (generated from the catalog), `mcp/resources`,
 * `mcp/skills/<name>` (per principal) and `mcp/server-skills/<server>/<path>` (downstream servers'
 * skills, instructions to read, not modules to import). Lookup, listing, suggestions for a mistyped
 * path and the routing of the host calls its own modules make all go through here.
 */
export class ModuleNamespace {
  readonly #options: ModuleNamespaceOptions;
  readonly #resources: string;

  constructor(options: ModuleNamespaceOptions) {
    this.#options = options;
    this.#resources = resourcesModule(options.hostCallGlobal);
  }

  /** The generated mounts (`servers/` and `bridge`), as codegen writes them to disk. */
  get generated(): ModuleTree {
    return this.#options.tree;
  }

  /** The source a snippet of `session` gets for `specifier`, from the mount it names; undefined when none has it. */
  source(specifier: string, session?: SessionInfo): string | undefined {
    const { tree, skills, extra } = this.#options;
    const generated = tree.get(specifier, this.#visibility(session));
    if (generated !== undefined) return generated;
    const path = specifier.replace(/\.ts$/, "");
    if (path === RESOURCES_SPECIFIER) return this.#resources;
    if (path.startsWith(SKILLS_PREFIX)) return skills.moduleSource(path, session?.principal);
    for (const source of extra ?? []) {
      const found = source(specifier, session);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** The path spelled closest to one that does not exist (none when nothing is close), for a did-you-mean. */
  suggest(specifier: string, session?: SessionInfo): string[] {
    return similarModules(specifier, { catalog: this.#options.access.catalog(session), tree: this.#options.tree, visible: this.#visibility(session) });
  }

  /** Which tools' modules exist for `session`: undefined (all of them) unless its policy hides some. */
  #visibility(session: SessionInfo | undefined): ToolVisibility | undefined {
    const grant = session === undefined ? undefined : this.#options.access.grant(session);
    return grant === undefined || grant.all ? undefined : (qualifiedName) => grant.sees(qualifiedName);
  }

  /** What is under a path (the whole namespace without one), for `session`'s principal; throws a sentence when nothing is. */
  list(path: string | undefined, session: SessionInfo): ModuleListing {
    const { access, tree, skills, serverSkills, status } = this.#options;
    const catalog = access.catalog(session);
    const specifier = path ? normalizeSpecifier(path) : MODULE_ROOT;
    if (isServerSkillPath(specifier)) {
      const server = specifier.slice(SERVER_SKILLS_PREFIX.length).split("/")[0] || undefined;
      const servers = serverSkills.list(session).filter((s) => server === undefined || s.server === server);
      return { kind: "server-skills", ...(server !== undefined ? { server } : {}), servers };
    }
    if (`${specifier}/` === SKILLS_PREFIX) return { kind: "skills", skills: skills.list(session.principal) };
    if (specifier === MODULE_ROOT || `${specifier}/` === SERVERS_PREFIX) {
      const servers = catalog.servers();
      const offering = serverSkills.list(session);
      return {
        kind: "root",
        servers: servers.map((name) => ({ name, tools: catalog.entries(name).length })),
        down: status().filter((s) => s.state !== "ready" && !servers.includes(s.name) && access.seesServer(session, s.name)),
        skills: skills.list(session.principal),
        serverSkills: { skills: offering.reduce((n, s) => n + s.skills.length, 0), servers: offering.length },
      };
    }
    const server = serverOf(specifier);
    if (server !== undefined && specifier === `${SERVERS_PREFIX}${server}` && catalog.servers().includes(server)) {
      return { kind: "server", specifier, entries: catalog.entries(server) };
    }
    const specifiers = tree.list(specifier, this.#visibility(session));
    if (specifiers.length > 0) return { kind: "modules", specifiers };
    throw new BadRequestError(
      `No modules under "${specifier}". Servers: ${
        catalog
          .servers()
          .map((s) => `${SERVERS_PREFIX}${s}`)
          .join(", ") || "none"
      }.`,
    );
  }

  /**
   * A module as read_module shows it: by path (`mcp/servers/fs/readTextFile`, also without `mcp/`),
   * by `server__tool` name, or `.../<tool>.schema` for the module of the tool's JSON Schemas. Throws a
   * sentence with the path meant when there is no such module. A server's skill is read from that
   * server, so reading is asynchronous.
   */
  async read(input: string, session: SessionInfo): Promise<{ specifier: string; source: string }> {
    const { access, tree, serverSkills } = this.#options;
    if (input.includes(SEPARATOR) && !input.includes("/")) {
      const entry = access.catalog(session).resolve(input.trim());
      return { specifier: entry.moduleSpecifier, source: tree.get(entry.moduleSpecifier) ?? "" };
    }
    const specifier = normalizeSpecifier(input);
    if (isServerSkillPath(specifier)) return { specifier, source: await serverSkills.read(specifier, session) };
    const source = this.source(specifier, session);
    if (source !== undefined) return { specifier, source };
    const close = this.suggest(specifier, session);
    throw new BadRequestError(
      `No module "${specifier}".${close.length ? ` Did you mean ${close.map((c) => `"${c}"`).join(", ")}?` : ""} search_tools or list_modules shows module paths.`,
    );
  }

  /** True for a host call of the namespace's own modules (`mcp/resources`), which no tool answers. */
  ownsCall(name: string): boolean {
    return isResourceCall(name);
  }

  /** Answers a host call `ownsCall` claimed, for the session whose snippet made it. */
  call(call: { name: string; args: unknown; session: SessionInfo; signal?: AbortSignal }): Promise<unknown> {
    return resourceCall(this.#options.resources, call);
  }
}

/** The mounts besides the servers, as list_modules names them. */
export const MOUNT_NOTES: readonly string[] = [
  `${BRIDGE_SPECIFIER}  (callTool / callToolRaw by server__tool name)`,
  `${RESOURCES_SPECIFIER}  (listResources / readResource of every server)`,
];

/** True for `mcp/server-skills` and what is under it: downstream servers' skills, which the namespace reads from their servers. */
export function isServerSkillPath(specifier: string): boolean {
  return `${specifier}/`.startsWith(SERVER_SKILLS_PREFIX);
}

/** Accepts `mcp/servers/fs/readTextFile` (and the same without `mcp/`); refuses absolute paths and `..`. */
export function normalizeSpecifier(input: string): string {
  const text = input.trim().replace(/\.(d\.)?ts$/, "");
  if (!text) throw new BadRequestError("The module path is empty; list_modules shows what exists.");
  if (text.startsWith("/") || text.startsWith("\\") || /^[A-Za-z]:/.test(text) || text.includes("\0")) {
    throw new BadRequestError(`"${input.slice(0, 300)}" is an absolute path; modules are named like "mcp/servers/fs/readTextFile".`);
  }
  const parts = text.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (parts.some((p) => p === ".."))
    throw new BadRequestError(`"${input.slice(0, 300)}" climbs with ".."; modules are named like "mcp/servers/fs/readTextFile".`);
  if (parts[0] !== MODULE_ROOT) parts.unshift(MODULE_ROOT);
  return parts.join("/");
}

/** `mcp/servers/<server>` for a path under it, else undefined. */
export function serverOf(specifier: string): string | undefined {
  return specifier.startsWith(SERVERS_PREFIX) ? specifier.slice(SERVERS_PREFIX.length).split("/")[0] : undefined;
}
