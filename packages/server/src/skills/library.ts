import { LOCAL_PRINCIPAL, SEPARATOR, SERVERS_PREFIX, type Logger, type SessionInfo, type SkillShelf } from "@codemux/core";
import { summarize, type Catalog, type CatalogDocument } from "@codemux/catalog";
import { snippetImports } from "@codemux/sandbox";
import type { ServerStatus } from "@codemux/pool";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BadRequestError, StoreError } from "../errors";
import { skillOfRecord, skillRecord } from "./shared-record";
import { MAX_SKILL_CODE_BYTES, MAX_SKILL_DESCRIPTION_CHARS, MAX_SKILLS, SKILL_NAME_PATTERN, checkSkillName, skillNameOf, skillSpecifier } from "./names";
import type { ToolScreen } from "../screen";
import type { Skill } from "./skill";
import { typeCheckSkill, type SkillImport } from "./typecheck";

export type { Skill } from "./skill";

/** A skill as listed: with what changed among its tools since it was saved. */
export interface ListedSkill extends Skill {
  problems: string[];
}

export interface SkillLibraryOptions {
  /** codemux's data folder: skills go to `<dataDir>/skills/<principal>/`. Kept in memory only (lost at exit) when absent. */
  dataDir?: string;
  /** A folder of skills a team commits (`.codemux/skills`): read here, never written; a principal's own skill of the same name wins. */
  projectDir?: string;
  /** Where every instance of a deployment keeps the saved skills (Redis), instead of `dataDir`; read by `refresh` before serving. */
  // The files stay read here at construction as before (one instance, nothing to hear from); only a shared store needs refresh and change messages.
  shared?: SkillShelf;
}

/** What a library needs of codemux: the catalog (to index skills and read their tools), the servers' states, the other modules, a clock. */
export interface SkillLibraryDependencies {
  catalog: Catalog;
  status(): ServerStatus[];
  /** A module a skill may import (a tool wrapper, the bridge), as a snippet of `who` (its policy too) would resolve it; skills are the library's own. */
  moduleSource(specifier: string, who: SkillAuthor): string | undefined;
  clock(): number;
  /** Where a shared store's failures to refresh are told; nothing is told without it. */
  logger?: Logger;
  /** The scan (security.scan): a skill it rates high is not saved under quarantine; hidden characters go from every one. */
  screen?: Pick<ToolScreen, "savedSkill">;
}

/** Who saves a skill: its principal, and the claims its policy may match. */
export type SkillAuthor = Pick<SessionInfo, "principal" | "groups" | "scopes">;

/** The metadata file beside each skill's `.ts`. */
interface SkillMeta {
  name: string;
  principal: string;
  description: string;
  signature: string;
  savedAt: string;
  tools: Record<string, string>;
}

/** Principals' folders read at start, at most. */
const MAX_PRINCIPALS = 1_000;
/** The server name skills carry in search documents: `search_tools` with server "skills" finds only them. */
const SKILLS_SERVER = "skills";
/** Modules one type check may pull in (the skill's imports and theirs). */
const MAX_CHECKED_MODULES = 300;

/**
 * Skills: snippets that worked, saved as modules `mcp/skills/<name>` that later snippets import like
 * tools. Each principal has its own (files under the data folder), plus the project's. A skill is
 * type-checked against the current tool modules when saved; its tools' schemas are remembered, so a
 * listing says when one disappeared or changed.
 */
export class SkillLibrary {
  readonly #deps: SkillLibraryDependencies;
  readonly #dir: string | undefined;
  readonly #projectDir: string | undefined;
  readonly #saved = new Map<string, Map<string, Skill>>();
  readonly #project = new Map<string, Skill>();
  readonly #shared: SkillShelf | undefined;
  /** Each shared skill's record as last read or written, by document id: what a save expects to replace. */
  readonly #records = new Map<string, string>();
  /** One refresh of a principal at a time, in the order changes were heard, so the last one read is the newest. */
  readonly #refreshing = new Map<string, Promise<void>>();

  constructor(deps: SkillLibraryDependencies, options: SkillLibraryOptions = {}) {
    this.#deps = deps;
    this.#dir = options.dataDir === undefined ? undefined : join(options.dataDir, "skills");
    this.#projectDir = options.projectDir;
    this.#shared = options.shared;
    this.#load();
    this.#shared?.onChange((principal) => {
      const done = principal === undefined ? this.refresh() : this.#refreshPrincipal(principal);
      done.catch((error: Error) => this.#deps.logger?.warn(`skills: ${error.message}`));
    });
  }

  /**
   * Reads every principal's saved skills from the shared store again (at start, before serving, and
   * when changes may have been missed): imports and search stay synchronous on the copy in memory.
   */
  async refresh(): Promise<void> {
    if (this.#shared === undefined) return;
    const byPrincipal = new Map<string, Map<string, string>>();
    for (const { principal, name, record } of await this.#shared.all()) {
      const records = byPrincipal.get(principal) ?? new Map<string, string>();
      records.set(name, record);
      byPrincipal.set(principal, records);
    }
    for (const principal of new Set([...this.#saved.keys(), ...byPrincipal.keys()])) this.#replace(principal, byPrincipal.get(principal) ?? new Map());
  }

  /** Answers `mcp/skills/<name>` with the skill's source for the principal (the local one when none is given). */
  moduleSource(specifier: string, principal: string = LOCAL_PRINCIPAL): string | undefined {
    const name = skillNameOf(specifier);
    return name === undefined ? undefined : this.get(principal, name)?.code;
  }

  /** The principal's skills and the project's it does not override, by name. */
  list(principal: string): ListedSkill[] {
    const own = this.#saved.get(principal) ?? new Map<string, Skill>();
    const all = [...own.values(), ...[...this.#project.values()].filter((s) => !own.has(s.name))];
    return all.sort((a, b) => a.name.localeCompare(b.name)).map((skill) => ({ ...skill, problems: this.problems(skill) }));
  }

  get(principal: string, name: string): Skill | undefined {
    return this.#saved.get(principal)?.get(name) ?? this.#project.get(name);
  }

  /** Checks, type-checks against the current tool modules, and saves (replacing the principal's skill of that name). */
  async save(principal: string, request: { name: string; code: string; description?: string }, claims: Omit<SkillAuthor, "principal"> = {}): Promise<Skill> {
    const name = checkSkillName(request.name);
    request = this.#screened(name, request);
    const bytes = Buffer.byteLength(request.code, "utf8");
    if (bytes > MAX_SKILL_CODE_BYTES)
      throw new BadRequestError(`The skill's code is ${bytes} bytes; a skill may have at most ${MAX_SKILL_CODE_BYTES}. Keep the reusable part.`);
    const given = request.description?.trim();
    if (given === "") throw new BadRequestError('"description" must say what the skill does: search_tools finds skills by it (or leave it out).');
    const description = given ?? leadingComment(request.code);
    if (description !== undefined && description.length > MAX_SKILL_DESCRIPTION_CHARS)
      throw new BadRequestError(`"description" may have at most ${MAX_SKILL_DESCRIPTION_CHARS} characters.`);
    const own = this.#saved.get(principal);
    if (!own?.has(name) && (own?.size ?? 0) >= MAX_SKILLS)
      throw new BadRequestError(`You have ${MAX_SKILLS} skills, the most codemux keeps; delete one with save_skill {name, delete: true} first.`);

    const specifier = skillSpecifier(name);
    const result = await typeCheckSkill({ name, specifier, code: request.code, modules: this.#importedModules(request.code, { ...claims, principal }, name) });
    if (!result.ok)
      throw new BadRequestError(
        result.typeErrors
          ? `Skill "${name}" was not saved; it does not type-check against the current tool modules:\n${result.errors.join("\n")}`
          : `Skill "${name}" was not saved: ${result.errors.join("\n")}`,
      );
    const skill: Skill = {
      name,
      // Left out, it is the code's leading doc comment (as for a project skill), else its signature: search_tools finds it by either.
      description: description ?? `Saved skill ${result.signature}`,
      code: request.code,
      signature: result.signature,
      savedAt: new Date(this.#deps.clock()).toISOString(),
      tools: this.#toolsOf(result.imports),
      origin: "saved",
    };
    if (this.#shared !== undefined) await this.#put(principal, skill);
    else if (this.#dir !== undefined) await this.#write(principal, skill);
    const skills = this.#saved.get(principal) ?? new Map<string, Skill>();
    skills.set(name, skill);
    this.#saved.set(principal, skills);
    this.#index(principal, skill);
    return skill;
  }

  /** The skill as the scan lets it be saved: without hidden characters; refused when it reads secrets, sends data away or shadows (quarantine). */
  #screened(name: string, request: { name: string; code: string; description?: string }): { name: string; code: string; description?: string } {
    const screened = this.#deps.screen?.savedSkill({ name, description: request.description, code: request.code });
    if (!screened) return request;
    if (screened.refused) {
      const found = screened.findings
        .filter((f) => f.severity === "high" || f.severity === "critical")
        .slice(0, 3)
        .map((f) => `${f.rule} (${f.severity}): ${f.message}`)
        .join("; ");
      throw new BadRequestError(
        `Skill "${name}" was not saved: codemux's scan found text that reads secrets, sends data away or redirects other tools in it (${found}). A skill is read by later snippets and searched by the model: leave that out (security.scan quarantine).`,
      );
    }
    return { name, code: screened.code, ...(screened.description === undefined ? {} : { description: screened.description }) };
  }

  /** Deletes the principal's skill; a project skill is the team's, deleted from its folder. */
  async delete(principal: string, name: string): Promise<void> {
    checkSkillName(name);
    const own = this.#saved.get(principal);
    if (!own?.has(name)) {
      if (this.#project.has(name))
        throw new BadRequestError(`Skill "${name}" comes from the project folder (${this.#projectDir}); remove ${name}.ts there to delete it.`);
      throw new BadRequestError(`No skill named "${name}". ${this.#names(principal)}`);
    }
    if (this.#shared !== undefined) await this.#shared.delete(principal, name);
    else if (this.#dir !== undefined) {
      const dir = join(this.#dir, principalFolder(principal));
      try {
        await rm(join(dir, `${name}.ts`), { force: true });
        await rm(join(dir, `${name}.json`), { force: true });
      } catch (error) {
        throw new StoreError(`delete skill "${name}"`, { cause: error });
      }
    }
    this.#drop(principal, name);
  }

  /** Deletes every skill `principal` saved, and its folder; the project's stay. Returns how many there were. */
  async forget(principal: string): Promise<number> {
    const own = this.#saved.get(principal);
    const count = this.#shared === undefined ? (own?.size ?? 0) : await this.#shared.forget(principal);
    if (this.#shared === undefined && this.#dir !== undefined) {
      try {
        await rm(join(this.#dir, principalFolder(principal)), { recursive: true, force: true });
      } catch (error) {
        throw new StoreError(`delete the skills of "${principal}"`, { cause: error });
      }
    }
    for (const name of [...(this.#saved.get(principal)?.keys() ?? [])]) this.#drop(principal, name);
    return count;
  }

  /** What changed among a skill's tools since it was saved: a server no longer in the config, a tool gone, or a different schema. A server still connecting is not judged. */
  problems(skill: Skill): string[] {
    const problems: string[] = [];
    const statuses = this.#deps.status();
    const configured = new Set(statuses.map((s) => s.name));
    const connecting = new Set(statuses.filter((s) => s.state === "connecting").map((s) => s.name));
    const missing = new Set<string>();
    for (const [qualifiedName, hash] of Object.entries(skill.tools)) {
      const entry = this.#deps.catalog.get(qualifiedName);
      const server = qualifiedName.split(SEPARATOR)[0] ?? "";
      if (!entry) {
        if (!configured.has(server)) missing.add(server);
        else if (!connecting.has(server)) problems.push(`${qualifiedName} is gone`);
      } else if (schemaHash(entry.tool) !== hash) {
        problems.push(`${qualifiedName} changed its schema`);
      }
    }
    for (const server of missing) problems.unshift(`it needs server "${server}", which is not in the config`);
    return problems;
  }

  /** Saves through the shared store over the record this instance last saw; a save another instance made meanwhile is never overwritten unseen. */
  async #put(principal: string, skill: Skill): Promise<void> {
    const id = documentId(principal, skill.name);
    const record = skillRecord(principal, skill);
    const outcome = await (this.#shared as SkillShelf).put({ principal, name: skill.name, record }, { expected: this.#records.get(id), max: MAX_SKILLS });
    if (outcome === "full")
      throw new BadRequestError(`You have ${MAX_SKILLS} skills, the most codemux keeps; delete one with save_skill {name, delete: true} first.`);
    if (outcome === "changed") {
      await this.#refreshPrincipal(principal).catch(() => undefined);
      const now = this.#saved.get(principal)?.get(skill.name);
      throw new BadRequestError(
        `Skill "${skill.name}" was ${now ? `saved (at ${now.savedAt})` : "deleted"} through another codemux instance while you saved it, so yours was not saved. Read mcp/skills/${skill.name} to see it, then save again to replace it.`,
      );
    }
    this.#records.set(id, record);
  }

  /** Reads one principal's skills from the shared store again (another instance changed them). */
  #refreshPrincipal(principal: string): Promise<void> {
    const shared = this.#shared as SkillShelf;
    const done = (this.#refreshing.get(principal) ?? Promise.resolve()).then(async () => this.#replace(principal, await shared.of(principal)));
    const settled = done.catch(() => undefined);
    this.#refreshing.set(principal, settled);
    void settled.then(() => {
      if (this.#refreshing.get(principal) === settled) this.#refreshing.delete(principal);
    });
    return done;
  }

  /** Makes the copy in memory (and the search index) of `principal`'s saved skills what the shared store holds. */
  #replace(principal: string, records: Map<string, string>): void {
    const next = new Map<string, Skill>();
    for (const [name, record] of [...records].slice(0, MAX_SKILLS)) {
      const recorded = skillOfRecord(principal, name, record);
      if (recorded === undefined) continue;
      next.set(name, { ...recorded, origin: "saved" });
      this.#records.set(documentId(principal, name), record);
    }
    for (const name of [...(this.#saved.get(principal)?.keys() ?? [])]) if (!next.has(name)) this.#drop(principal, name);
    if (next.size === 0) return;
    this.#saved.set(principal, next);
    for (const skill of next.values()) this.#index(principal, skill);
  }

  /** Takes one of `principal`'s skills out of memory and the search index; the project's of that name shows again. */
  #drop(principal: string, name: string): void {
    const own = this.#saved.get(principal);
    own?.delete(name);
    if (own?.size === 0) this.#saved.delete(principal);
    this.#records.delete(documentId(principal, name));
    this.#deps.catalog.removeDocument("skill", documentId(principal, name));
    const project = this.#project.get(name);
    if (project) this.#index(undefined, project);
  }

  #names(principal: string): string {
    const names = this.list(principal).map((s) => s.name);
    return names.length ? `Skills: ${names.join(", ")}.` : "There are no skills yet; save_skill saves one.";
  }

  /** The sources of every `mcp/...` module the code imports, transitively, as a snippet would resolve them. */
  #importedModules(code: string, author: SkillAuthor, name: string): Record<string, string> {
    const { principal } = author;
    const modules: Record<string, string> = {};
    const pending = snippetImports(code);
    while (pending.length > 0 && Object.keys(modules).length < MAX_CHECKED_MODULES) {
      const specifier = (pending.pop() as string).replace(/\.ts$/, "");
      if (specifier in modules || !specifier.startsWith("mcp/")) continue;
      const other = skillNameOf(specifier);
      // A skill that imports itself, or one that is not there, is the type checker's to report ("cannot find module").
      const source = other !== undefined ? (other === name ? undefined : this.get(principal, other)?.code) : this.#deps.moduleSource(specifier, author);
      if (source === undefined) continue;
      modules[specifier] = source;
      pending.push(...snippetImports(source));
    }
    return modules;
  }

  /** `server__tool` names of the tool modules imported (directly, or by name from a server's index), with their schemas' hashes. */
  #toolsOf(imports: SkillImport[]): Record<string, string> {
    const tools: Record<string, string> = {};
    for (const { specifier, names } of imports) {
      if (!specifier.startsWith(SERVERS_PREFIX)) continue;
      const [server = "", fn] = specifier.slice(SERVERS_PREFIX.length).split("/");
      const wanted = fn !== undefined && fn !== "index" ? [fn] : names;
      for (const entry of this.#deps.catalog.entries(server)) if (wanted.includes(entry.functionName)) tools[entry.qualifiedName] = schemaHash(entry.tool);
    }
    return tools;
  }

  async #write(principal: string, skill: Skill): Promise<void> {
    const dir = join(this.#dir as string, principalFolder(principal));
    const meta: SkillMeta = {
      name: skill.name,
      principal,
      description: skill.description,
      signature: skill.signature,
      savedAt: skill.savedAt,
      tools: skill.tools,
    };
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // Code first, then the metadata that makes it a skill: a crash between leaves no half skill.
      for (const [file, text] of [
        [`${skill.name}.ts`, skill.code],
        [`${skill.name}.json`, JSON.stringify(meta, null, 2)],
      ] as const) {
        const temporary = join(dir, `.${file}.${process.pid}.tmp`);
        await writeFile(temporary, text, { mode: 0o600 });
        await rename(temporary, join(dir, file));
      }
    } catch (error) {
      throw new StoreError(`save skill "${skill.name}"`, { cause: error });
    }
  }

  /** Reads every principal's skills and the project's at start (bounded counts and sizes), so search and imports find them at once. */
  #load(): void {
    if (this.#projectDir !== undefined && existsSync(this.#projectDir)) {
      for (const skill of readFolder(this.#projectDir, "project")) {
        this.#project.set(skill.skill.name, skill.skill);
        this.#index(undefined, skill.skill);
      }
    }
    // With a shared store the data folder's skills are not this deployment's: `refresh` reads the shared ones.
    if (this.#shared !== undefined || this.#dir === undefined || !existsSync(this.#dir)) return;
    for (const folder of readdirSync(this.#dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .slice(0, MAX_PRINCIPALS)) {
      for (const { skill, principal } of readFolder(join(this.#dir, folder.name), "saved")) {
        if (principal === undefined || principalFolder(principal) !== folder.name) continue;
        const skills = this.#saved.get(principal) ?? new Map<string, Skill>();
        skills.set(skill.name, skill);
        this.#saved.set(principal, skills);
        this.#index(principal, skill);
      }
    }
  }

  /** Makes a skill findable by search_tools, marked as a skill, for its owner (everyone, for project skills). */
  #index(principal: string | undefined, skill: Skill): void {
    const document: CatalogDocument = {
      id: documentId(principal, skill.name),
      kind: "skill",
      ...(principal !== undefined ? { owner: principal } : {}),
      qualifiedName: `skill:${skill.name}`,
      server: SKILLS_SERVER,
      name: skill.name,
      functionName: skill.name,
      moduleSpecifier: skillSpecifier(skill.name),
      signature: skill.signature,
      summary: summarize(skill.description),
      tool: { name: skill.name, description: skill.description, inputSchema: { type: "object" } },
    };
    // A principal's own skill hides the project's of the same name from that principal's searches.
    this.#deps.catalog.setDocument(document);
  }
}

/** The principal's folder name: the principal itself when it is a plain short name, else a hash of it (never a path). */
/** The folder of `principal`'s skills under a data folder (for removing them while no codemux runs on it). */
export function skillsFolder(dataDir: string, principal: string): string {
  return join(dataDir, "skills", principalFolder(principal));
}

function principalFolder(principal: string): string {
  if (/^[A-Za-z0-9_-]{1,64}$/.test(principal) && !principal.startsWith("h-")) return principal;
  return `h-${createHash("sha256").update(principal).digest("hex").slice(0, 32)}`;
}

function documentId(principal: string | undefined, name: string): string {
  return principal === undefined ? `project/${name}` : `${principalFolder(principal)}/${name}`;
}

function schemaHash(tool: { inputSchema: unknown; outputSchema?: unknown }): string {
  return createHash("sha256")
    .update(JSON.stringify({ input: tool.inputSchema, output: tool.outputSchema ?? null }))
    .digest("hex")
    .slice(0, 16);
}

/** The skills of one folder: `<name>.ts`, with `<name>.json` (saved skills) or a leading doc comment as the description (project skills). */
function readFolder(dir: string, origin: Skill["origin"]): Array<{ skill: Skill; principal?: string }> {
  const out: Array<{ skill: Skill; principal?: string }> = [];
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".ts") && SKILL_NAME_PATTERN.test(f.slice(0, -3)));
  } catch {
    return out;
  }
  for (const file of files.sort().slice(0, MAX_SKILLS)) {
    const name = file.slice(0, -3);
    try {
      if (statSync(join(dir, file)).size > MAX_SKILL_CODE_BYTES) continue;
      const code = readFileSync(join(dir, file), "utf8");
      const metaPath = join(dir, `${name}.json`);
      const meta =
        existsSync(metaPath) && statSync(metaPath).size <= MAX_SKILL_CODE_BYTES
          ? (JSON.parse(readFileSync(metaPath, "utf8")) as Partial<SkillMeta>)
          : undefined;
      if (origin === "saved" && meta?.principal === undefined) continue;
      out.push({
        skill: {
          name,
          description: typeof meta?.description === "string" ? meta.description : (leadingComment(code) ?? name),
          code,
          signature: typeof meta?.signature === "string" ? meta.signature : declaredSignature(code, name),
          savedAt: typeof meta?.savedAt === "string" ? meta.savedAt : new Date(statSync(join(dir, file)).mtimeMs).toISOString(),
          tools: meta?.tools && typeof meta.tools === "object" ? meta.tools : {},
          origin,
        },
        ...(typeof meta?.principal === "string" ? { principal: meta.principal } : {}),
      });
    } catch {
      // A file that cannot be read or parsed is not a skill; the others still load.
    }
  }
  return out;
}

/** The text of a source's first `/** ... *\/` comment, for a project skill without metadata. */
function leadingComment(code: string): string | undefined {
  const match = /^\s*\/\*\*([\s\S]{0,2000}?)\*\//.exec(code);
  return match?.[1]?.replace(/^\s*\* ?/gm, "").trim() || undefined;
}

/**
 * The exported function's signature as written (`name(input: { ... }): Promise<...>`), for a project
 * skill that was never checked by save: read up to the body's brace, in one bounded pass.
 */
function declaredSignature(code: string, name: string): string {
  const match = new RegExp(`export\\s+(?:async\\s+)?function\\s+${name}\\s*\\(`).exec(code);
  if (!match) return `${name}(…)`;
  let depth = 0;
  const start = match.index + match[0].length - 1;
  for (let i = start; i < Math.min(code.length, start + 1000); i++) {
    const c = code[i];
    if (c === ">" && code[i - 1] === "=") continue;
    if (c === "(" || c === "<" || c === "[" || (c === "{" && depth > 0)) depth++;
    else if (c === ")" || c === ">" || c === "]" || c === "}") depth--;
    else if (c === "{" && depth === 0) return `${name}${code.slice(start, i).replace(/\s+/g, " ").trim()}`;
  }
  return `${name}(…)`;
}
