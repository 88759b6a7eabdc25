import { SkillsClient, type Skill } from "@modelcontextprotocol/client/ext/skills";
import type { DownstreamClient } from "./channel";

/** Skills of one server codemux keeps, at most: the rest are counted, not listed. */
export const MAX_SERVER_SKILLS = 200;
/** A skill file codemux reads, at most: instructions, not data. */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;
/** How long listing or reading a server's skills may take. */
const SKILLS_TIMEOUT_MS = 30_000;
/** What a skill's description adds to search, at most (the extension allows 1024). */
const MAX_DESCRIPTION_CHARS = 1024;
/** One segment of a skill's path: it becomes part of a module specifier, so nothing that could climb or mislead. */
const PATH_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A skill a downstream server offers (the `io.modelcontextprotocol/skills` extension), as codemux names and indexes it. */
export interface DownstreamSkill {
  /** Its `SKILL.md` URI on the server: with the server, its identity. */
  uri: string;
  /** The path of its folder, unique on its server: `acme/pdf-forms` for `skill://acme/pdf-forms/SKILL.md`. */
  path: string;
  name: string;
  description: string;
  /** Its other files, relative to its folder (`references/FIELDS.md`); none for a skill whose files are "dynamic". */
  files: string[];
  /** The entry as the server listed it, which reads are checked against. */
  entry: Skill;
}

/** A server's skills, and how many it offered that codemux left out (unusable paths, or beyond MAX_SERVER_SKILLS). */
export interface DownstreamSkills {
  skills: DownstreamSkill[];
  leftOut: number;
}

/** Lists the skills of a server that declared the extension (none otherwise); entries the SDK finds invalid are left out. */
export async function listDownstreamSkills(client: DownstreamClient): Promise<DownstreamSkills> {
  const skills = new SkillsClient(client, { skipInvalid: true });
  if (!skills.supported) return { skills: [], leftOut: 0 };
  const listing = await skills.list(undefined, { timeout: SKILLS_TIMEOUT_MS });
  const usable = listing.skills.flatMap((entry) => {
    const skill = downstreamSkill(entry);
    return skill ? [skill] : [];
  });
  const kept = usable.slice(0, MAX_SERVER_SKILLS);
  return { skills: kept, leftOut: listing.invalid.length + listing.skills.length - kept.length };
}

/** The entry of the skill whose `SKILL.md` is at `uri` on a server that declared the extension, listed or not (`skills/get`); undefined when it serves none. */
export async function getDownstreamSkill(client: DownstreamClient, uri: string): Promise<Skill | undefined> {
  const skills = new SkillsClient(client);
  if (!skills.supported) return undefined;
  return (await skills.get(uri, { timeout: SKILLS_TIMEOUT_MS })).skill;
}

/**
 * Reads one file of a skill (its `SKILL.md` by default, else `ref` relative to its folder), checked by the SDK against
 * the listed entry (listed, size, digest); a file listed larger than MAX_SKILL_FILE_BYTES is refused before it is asked for.
 */
export async function readDownstreamSkill(client: DownstreamClient, skill: DownstreamSkill, ref?: string): Promise<{ uri: string; text: string }> {
  const wanted = ref === undefined ? skill.uri : `${skill.uri.slice(0, -"SKILL.md".length)}${ref}`;
  const listed = skill.entry.resources === "dynamic" ? undefined : skill.entry.resources.find((r) => r.uri === wanted);
  if (listed && listed.size > MAX_SKILL_FILE_BYTES)
    throw new Error(`${wanted} is ${listed.size} bytes long; codemux reads skill files of at most ${MAX_SKILL_FILE_BYTES} bytes.`);
  const file = await new SkillsClient(client).read(skill.entry, ref, { timeout: SKILLS_TIMEOUT_MS });
  // A "dynamic" skill lists no sizes, so only the bytes read can be checked.
  if (!file.verified && file.bytes.byteLength > MAX_SKILL_FILE_BYTES)
    throw new Error(`${file.uri} is ${file.bytes.byteLength} bytes long; codemux reads skill files of at most ${MAX_SKILL_FILE_BYTES} bytes.`);
  if (file.text === undefined) throw new Error(`${file.uri} is not text (${file.mimeType ?? "binary"}); read it with readResource from mcp/resources.`);
  return { uri: file.uri, text: file.text };
}

/** The entry as codemux keeps it, or undefined when its URI gives no usable path. */
function downstreamSkill(entry: Skill): DownstreamSkill | undefined {
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(.+)\/SKILL\.md$/.exec(entry.uri);
  const path = match?.[1];
  if (path === undefined || !path.split("/").every((segment) => PATH_SEGMENT.test(segment) && segment !== "..")) return undefined;
  const folder = entry.uri.slice(0, -"SKILL.md".length);
  const frontmatter = entry.frontmatter as { name?: unknown; description?: unknown };
  return {
    uri: entry.uri,
    path,
    name: typeof frontmatter.name === "string" ? frontmatter.name : (path.split("/").pop() as string),
    description: typeof frontmatter.description === "string" ? frontmatter.description.slice(0, MAX_DESCRIPTION_CHARS) : "",
    files:
      entry.resources === "dynamic"
        ? []
        : entry.resources.flatMap((r) => (r.uri !== entry.uri && r.uri.startsWith(folder) ? [r.uri.slice(folder.length)] : [])).slice(0, 100),
    entry,
  };
}
