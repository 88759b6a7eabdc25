import { BRIDGE_SPECIFIER, MODULE_ROOT, SEPARATOR, SERVERS_PREFIX, serverModuleSpecifier, type SessionInfo } from "@codemux/core";
import { SANDBOX_GLOBALS } from "@codemux/sandbox";
import type { Codemux } from "../core";
import { BadRequestError } from "../errors";
import { textResult } from "../render";
import { attachSkills } from "../skills/attach";
import { similarModules } from "../similar-modules";
import { SKILLS_PREFIX } from "../skills/names";
import { defineMetaTool } from "./registry";

/** read_module answers this many modules at once, at most. */
const MAX_SPECIFIERS = 5;
const SCHEMA_SUFFIX = ".schema";
/** Skills with problems the module root names; list_modules mcp/skills shows them all. */
const MAX_SKILLS_NAMED = 3;

export const listModules = defineMetaTool<{ path?: string }>({
  name: "list_modules",
  description: 'List modules; path "mcp/servers/fs" lists one server\'s.',
  inputSchema: { type: "object", properties: { path: { type: "string", maxLength: 300 } } },
  annotations: { readOnlyHint: true },
  run: async ({ path }, { core, session }) => {
    await core.discovered();
    return textResult(listModuleText(core, path, session) + notes(core));
  },
});

export const readModule = defineMetaTool<{ specifier?: string; specifiers?: string[] }>({
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
  run: async ({ specifier, specifiers }, { core, session }) => {
    const wanted = [...(specifier !== undefined ? [specifier] : []), ...(specifiers ?? [])];
    if (wanted.length === 0) throw new BadRequestError('"specifier" is required: a module path such as "mcp/servers/fs/readTextFile".');
    if (wanted.length > MAX_SPECIFIERS) throw new BadRequestError(`read_module reads at most ${MAX_SPECIFIERS} modules at once.`);
    await core.discovered();
    if (wanted.length === 1) return textResult(readModuleText(core, wanted[0] as string, session));
    return textResult(wanted.map((s) => `// ${s}\n${readModuleText(core, s, session)}`).join("\n\n"));
  },
});

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

function listModuleText(core: Codemux, path: string | undefined, session: SessionInfo): string {
  const { catalog, modules } = core;
  const specifier = path ? normalizeSpecifier(path) : MODULE_ROOT;
  const skills = attachSkills(core).list(session.principal);
  if (`${specifier}/` === SKILLS_PREFIX) {
    if (skills.length === 0) return "No skills yet: save_skill saves a snippet that worked as mcp/skills/<name>.";
    return skills
      .map(
        (s) =>
          `${SKILLS_PREFIX}${s.name}  ${s.signature}${s.origin === "project" ? "  (project)" : ""}${s.problems.length ? `  [check it: ${s.problems.join("; ")}]` : ""}\n  ${s.description.split("\n")[0]?.slice(0, 200) ?? ""}`,
      )
      .join("\n");
  }
  if (specifier === MODULE_ROOT || `${specifier}/` === SERVERS_PREFIX) {
    const servers = catalog.servers();
    const down = core.status().filter((s) => s.state !== "ready" && !servers.includes(s.name));
    const lines = [
      ...servers.map((s) => `${serverModuleSpecifier(s)}  (${catalog.entries(s).length} tools)`),
      ...down.map((s) => `${serverModuleSpecifier(s.name)}  (${s.error ? `${s.state}: ${s.error}` : (s.detail ?? s.state)})`),
    ];
    if (skills.length > 0) lines.push(`${SKILLS_PREFIX.slice(0, -1)}  (${skills.length} skill${skills.length === 1 ? "" : "s"}${skillsToCheck(skills)})`);
    if (lines.length === 0) return "No servers are connected yet.";
    return [
      ...lines,
      `${BRIDGE_SPECIFIER}  (callTool / callToolRaw by server__tool name)`,
      "mcp/resources  (listResources / readResource of every server)",
      `Snippet globals: ${SANDBOX_GLOBALS.join(", ")} and the ECMAScript built-ins; no network, files or process.`,
    ].join("\n");
  }
  const server = specifier.startsWith(SERVERS_PREFIX) ? specifier.slice(SERVERS_PREFIX.length) : undefined;
  if (server && catalog.servers().includes(server)) {
    return (
      catalog
        .entries(server)
        .map((e) => `${e.moduleSpecifier}  ${e.signature}`)
        .join("\n") || `${specifier} has no tools.`
    );
  }
  const found = modules.list(specifier);
  if (found.length > 0) return found.join("\n");
  throw new BadRequestError(`No modules under "${specifier}". Servers: ${catalog.servers().map(serverModuleSpecifier).join(", ") || "none"}.`);
}

function readModuleText(core: Codemux, input: string, session: SessionInfo): string {
  // A server__tool name, as search_tools and call_tool use, names that tool's module.
  if (input.includes(SEPARATOR) && !input.includes("/")) return core.modules.get(core.catalog.resolve(input.trim()).moduleSpecifier) ?? "";
  const normalized = normalizeSpecifier(input);
  if (normalized.endsWith(SCHEMA_SUFFIX)) {
    const entry = core.catalog.entries().find((e) => e.moduleSpecifier === normalized.slice(0, -SCHEMA_SUFFIX.length));
    if (entry) return JSON.stringify(entry.tool.inputSchema, null, 2);
  }
  const source = core.module(normalized, session) ?? attachSkills(core).moduleSource(normalized, session);
  if (source !== undefined) return source;
  const close = similarModules(normalized, core);
  throw new BadRequestError(
    `No module "${normalized}".${close.length ? ` Did you mean ${close.map((c) => `"${c}"`).join(", ")}?` : ""} search_tools or list_modules shows module paths.`,
  );
}

/** `; check report: it needs server "github", which is not in the config` for the first skills with problems, the rest counted. */
function skillsToCheck(skills: ReadonlyArray<{ name: string; problems: string[] }>): string {
  const toCheck = skills.filter((s) => s.problems.length > 0);
  if (toCheck.length === 0) return "";
  const named = toCheck.slice(0, MAX_SKILLS_NAMED).map((s) => `${s.name}: ${s.problems.join("; ")}`);
  const more = toCheck.length - named.length;
  return `; check ${named.join("; ")}${more > 0 ? `; and ${more} more (list_modules mcp/skills)` : ""}`;
}

function notes(core: Codemux): string {
  const pending = core.pendingNote();
  return pending.length ? `\n${pending.join("\n")}` : "";
}
