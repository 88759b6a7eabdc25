import { isReservedWord } from "@codemux/core";
import { BadRequestError } from "../errors";

/** Where skills are imported from: `mcp/skills/<name>`. */
export const SKILLS_PREFIX = "mcp/skills/";
/** An identifier of at most 64 characters: it is the exported function's name, the module's last segment and a file name, so it can never name a path. */
export const SKILL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** A skill's source, at most: a snippet worth keeping, not a library. */
export const MAX_SKILL_CODE_BYTES = 64 * 1024;
export const MAX_SKILL_DESCRIPTION_CHARS = 1_000;
/** Skills one principal (or the project folder) may keep. */
export const MAX_SKILLS = 200;

/** The name, checked: a bounded identifier, not a reserved word. */
export function checkSkillName(name: string): string {
  if (!SKILL_NAME_PATTERN.test(name)) {
    throw new BadRequestError(
      `Skill name "${name.slice(0, 80)}" is not usable: it must be an identifier (letters, digits, _; not starting with a digit) of at most 64 characters, such as "summarizeIssues".`,
    );
  }
  if (isReservedWord(name)) throw new BadRequestError(`Skill name "${name}" is a reserved word of JavaScript; choose another.`);
  return name;
}

export function skillSpecifier(name: string): string {
  return `${SKILLS_PREFIX}${name}`;
}

/** The skill a module specifier names (`mcp/skills/foo`, also with `.ts`), or undefined. */
export function skillNameOf(specifier: string): string | undefined {
  const normalized = specifier.replace(/\.ts$/, "");
  if (!normalized.startsWith(SKILLS_PREFIX)) return undefined;
  const name = normalized.slice(SKILLS_PREFIX.length);
  return SKILL_NAME_PATTERN.test(name) ? name : undefined;
}

/** The folder of skills a team commits beside its code, read when it exists in the folder codemux starts in. */
export const PROJECT_SKILLS_DIR = ".codemux/skills";

/** Where downstream servers' skills are read: `mcp/server-skills/<server>/<skill path>`; `mcp/skills/` stays codemux's own saved skills. */
export const SERVER_SKILLS_PREFIX = "mcp/server-skills/";
/** Search document ids of server skills start with this; saved skills' ids never do (their folders are plain names or hashes). */
export const SERVER_SKILL_DOCUMENT_PREFIX = "@";

/** True for the search document id (`skill:@<server>/...`) of a downstream server's skill, which the server's visibility governs. */
export function isServerSkillDocument(id: string): boolean {
  return id.startsWith(`skill:${SERVER_SKILL_DOCUMENT_PREFIX}`);
}
