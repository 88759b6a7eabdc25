import { SCHEMA_MODULE_SUFFIX, defineMetaTool, serverModuleSpecifier, textResult } from "@codemux/core";
import { SANDBOX_GLOBALS } from "@codemux/sandbox";
import { BadRequestError } from "../errors";
import { MOUNT_NOTES, type ModuleListing } from "../modules/namespace";
import type { CodemuxServices } from "../services";
import type { ListedSkill } from "../skills/library";
import { SERVER_SKILLS_PREFIX, SKILLS_PREFIX } from "../skills/names";

/** read_module answers this many modules at once, at most. */
const MAX_SPECIFIERS = 5;
/** Skills with problems the module root names; list_modules mcp/skills shows them all. */
const MAX_SKILLS_NAMED = 3;

export const listModules = defineMetaTool<{ path?: string }, CodemuxServices>({
  name: "list_modules",
  description: 'List modules; path "mcp/servers/fs" lists one server\'s.',
  inputSchema: { type: "object", properties: { path: { type: "string", maxLength: 300 } } },
  annotations: { readOnlyHint: true },
  run: async ({ path }, { services, session }) => {
    await services.readiness.discovered();
    const pending = services.readiness.pendingNote(services.access.serverFilter(session));
    return textResult([listingText(services.namespace.list(path, session)), ...pending].join("\n"));
  },
});

export const readModule = defineMetaTool<{ specifier?: string; specifiers?: string[] }, CodemuxServices>({
  name: "read_module",
  description: 'A module\'s TypeScript; specifier "mcp/servers/fs/readTextFile" or server__tool.',
  inputSchema: {
    type: "object",
    properties: {
      specifier: { type: "string", maxLength: 300 },
      // Several at once; accepted, not listed (a client can as well read modules in parallel calls).
      specifiers: { type: "array", items: { type: "string", maxLength: 300 }, maxItems: MAX_SPECIFIERS, unlisted: true },
    },
  },
  annotations: { readOnlyHint: true },
  run: async ({ specifier, specifiers }, { services, session }) => {
    const wanted = [...(specifier !== undefined ? [specifier] : []), ...(specifiers ?? [])];
    if (wanted.length === 0) throw new BadRequestError('"specifier" is required: a module path such as "mcp/servers/fs/readTextFile".');
    if (wanted.length > MAX_SPECIFIERS) throw new BadRequestError(`read_module reads at most ${MAX_SPECIFIERS} modules at once.`);
    await services.readiness.discovered();
    const read = async (s: string) => (await services.namespace.read(s, session)).source;
    if (wanted.length === 1) return textResult(await read(wanted[0] as string));
    return textResult((await Promise.all(wanted.map(async (s) => `// ${s}\n${await read(s)}`))).join("\n\n"));
  },
});

/** A listing as the model reads it: one module a line, with what it holds. */
export function listingText(listing: ModuleListing): string {
  switch (listing.kind) {
    case "skills":
      if (listing.skills.length === 0) return "No skills yet: save_skill saves a snippet that worked as mcp/skills/<name>.";
      return listing.skills
        .map(
          (s) =>
            `${SKILLS_PREFIX}${s.name}  ${s.signature}${s.origin === "project" ? "  (project)" : ""}${s.problems.length ? `  [check it: ${s.problems.join("; ")}]` : ""}\n  ${s.description.split("\n")[0]?.slice(0, 200) ?? ""}`,
        )
        .join("\n");
    case "root": {
      const lines = [
        ...listing.servers.map((s) => `${serverModuleSpecifier(s.name)}  (${s.tools} tools)`),
        ...listing.down.map((s) => `${serverModuleSpecifier(s.name)}  (${s.error ? `${s.state}: ${s.error}` : (s.detail ?? s.state)})`),
      ];
      const skills = listing.skills;
      if (skills.length > 0) lines.push(`${SKILLS_PREFIX.slice(0, -1)}  (${skills.length} skill${skills.length === 1 ? "" : "s"}${skillsToCheck(skills)})`);
      const offered = serverSkillsLine(listing.serverSkills);
      if (lines.length === 0) return ["No servers are connected yet.", ...offered].join("\n");
      return [
        ...lines,
        ...MOUNT_NOTES,
        `Snippet globals: ${SANDBOX_GLOBALS.join(", ")} and the ECMAScript built-ins; no network, files or process.`,
        ...offered,
      ].join("\n");
    }
    case "server-skills":
      if (listing.servers.length === 0) return listing.server === undefined ? "No server offers skills." : `No skills of a server named "${listing.server}".`;
      return listing.servers
        .flatMap((s) => s.skills.map((k) => `${SERVER_SKILLS_PREFIX}${s.server}/${k.path}\n  ${k.description.split("\n")[0]?.slice(0, 200) ?? ""}`))
        .join("\n");
    case "server":
      if (listing.entries.length === 0) return `${listing.specifier} has no tools.`;
      return [
        ...listing.entries.map((e) => `${e.moduleSpecifier}  ${e.signature}`),
        `Input JSON Schemas: import { schema } from "${listing.specifier}/<function>${SCHEMA_MODULE_SUFFIX}".`,
      ].join("\n");
    case "modules":
      return listing.specifiers.join("\n");
  }
}

/** The root's line `mcp/server-skills  (5 skills of 2 servers: ...)`, none when no server the session sees offers skills. */
function serverSkillsLine({ skills, servers }: { skills: number; servers: number }): string[] {
  if (skills === 0) return [];
  return [
    `${SERVER_SKILLS_PREFIX.slice(0, -1)}  (${skills} skill${skills === 1 ? "" : "s"} of ${servers} server${servers === 1 ? "" : "s"}: instructions, read with read_module)`,
  ];
}

/** `; check report: it needs server "github", which is not in the config` for the first skills with problems, the rest counted. */
function skillsToCheck(skills: readonly ListedSkill[]): string {
  const toCheck = skills.filter((s) => s.problems.length > 0);
  if (toCheck.length === 0) return "";
  const named = toCheck.slice(0, MAX_SKILLS_NAMED).map((s) => `${s.name}: ${s.problems.join("; ")}`);
  const more = toCheck.length - named.length;
  return `; check ${named.join("; ")}${more > 0 ? `; and ${more} more (list_modules mcp/skills)` : ""}`;
}
