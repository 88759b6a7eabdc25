import type { ReadResourceResult } from "@modelcontextprotocol/server";
import type { Skill as SkillEntry } from "@modelcontextprotocol/server/ext/skills";
import { createHash } from "node:crypto";
import { skillSpecifier } from "./names";
import type { Skill } from "./skill";

/** Where codemux's own saved skills are served: a dot, which no server name has, so never a downstream server's `skill://<server>/`. */
export const SAVED_SKILLS_ROOT = "skill://codemux.saved/";
/** A skill name as the Agent Skills format has it: lowercase letters, digits and single hyphens, at most 64. */
const AGENT_SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const SOURCE_FILE = "skill.ts";

/** A saved skill as an Agent Skill: its generated `SKILL.md` and its source, by URI. */
interface SavedSkillFiles {
  entry: SkillEntry;
  files: Map<string, { text: string; mimeType: string }>;
}

/**
 * codemux's saved skills (`mcp/skills/<name>`, TypeScript a snippet imports) as Agent Skills for a client of the
 * skills extension: `skill://codemux.saved/<kebab-name>/SKILL.md` says how to run it through `execute_code`, with
 * its source beside it as `skill.ts`. Only where `execute_code` is (mode code); see docs/design/skills.md.
 */
export function savedSkillFiles(skills: readonly Skill[]): SavedSkillFiles[] {
  const seen = new Set<string>();
  const out: SavedSkillFiles[] = [];
  for (const skill of skills) {
    const name = agentSkillName(skill.name);
    // Two saved names of one Agent Skill name (fooBar, foo_bar): the first is served, the other is still imported as before.
    if (name === undefined || seen.has(name)) continue;
    seen.add(name);
    const folder = `${SAVED_SKILLS_ROOT}${name}/`;
    const description = (skill.description.trim() || `The saved codemux skill ${skill.name}: ${skill.signature}`).slice(0, 1024);
    const manifest = [
      "---",
      `name: ${name}`,
      // JSON's string is YAML's double-quoted scalar: any description reads back as written.
      `description: ${JSON.stringify(description)}`,
      "---",
      `# ${skill.name} (a skill saved in codemux)`,
      "",
      "Run it with codemux's `execute_code` tool, in a snippet that imports it:",
      "",
      "```ts",
      `import { ${skill.name} } from "${skillSpecifier(skill.name)}";`,
      `export default await ${skill.name}({ /* its input */ });`,
      "```",
      "",
      `Signature: \`${skill.signature}\``,
      "",
      `Its source is [${SOURCE_FILE}](${SOURCE_FILE}).`,
      "",
    ].join("\n");
    const files = new Map([
      [`${folder}SKILL.md`, { text: manifest, mimeType: "text/markdown" }],
      [`${folder}${SOURCE_FILE}`, { text: skill.code, mimeType: "text/typescript" }],
    ]);
    const resources = [...files].map(([uri, file]) => {
      const bytes = Buffer.from(file.text, "utf8");
      return { uri, digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`, size: bytes.byteLength };
    });
    out.push({ entry: { uri: `${folder}SKILL.md`, frontmatter: { name, description }, resources }, files });
  }
  return out;
}

/** The `resources/read` answer for one file of these saved skills; undefined when `uri` is none of theirs. */
export function readSavedSkillFile(skills: readonly Skill[], uri: string): ReadResourceResult | undefined {
  if (!uri.startsWith(SAVED_SKILLS_ROOT)) return undefined;
  for (const { files } of savedSkillFiles(skills)) {
    const file = files.get(uri);
    if (file) return { contents: [{ uri, mimeType: file.mimeType, text: file.text }] };
  }
  return undefined;
}

/** `summarizeIssues` / `summarize_issues` -> `summarize-issues`; undefined when the result is no Agent Skill name. */
function agentSkillName(name: string): string | undefined {
  const kebab = name
    .replaceAll(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replaceAll("_", "-")
    .toLowerCase()
    .replaceAll(/-+/g, "-")
    .replaceAll(/^-|-$/g, "");
  return kebab.length <= 64 && AGENT_SKILL_NAME.test(kebab) ? kebab : undefined;
}
