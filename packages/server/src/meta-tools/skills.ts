import { MAX_SKILL_CODE_BYTES } from "../skills/names";
import { attachSkills } from "../skills/attach";
import { textResult } from "../render";
import { defineMetaTool } from "./registry";

export const saveSkill = defineMetaTool<{ name: string; code: string; description: string }>({
  name: "save_skill",
  description:
    "Save code that worked as module mcp/skills/<name> for later snippets to import. It must export async function <name>(input: {...}): Promise<...>; saving type-checks it.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 64, description: "Identifier; also the function's name." },
      code: { type: "string", maxLength: MAX_SKILL_CODE_BYTES, description: "The TypeScript module." },
      description: { type: "string", maxLength: 1000, description: "What it does; search finds it by this." },
    },
    required: ["name", "code", "description"],
  },
  run: async (input, { core, session }) => {
    const skill = await attachSkills(core).save(session.principal, input);
    return textResult(`Saved mcp/skills/${skill.name}: ${skill.signature}\nImport it in execute_code: import { ${skill.name} } from "mcp/skills/${skill.name}";`);
  },
});

export const deleteSkill = defineMetaTool<{ name: string }>({
  name: "delete_skill",
  description: "Delete a saved skill.",
  inputSchema: { type: "object", properties: { name: { type: "string", maxLength: 64, description: "The skill's name." } }, required: ["name"] },
  annotations: { destructiveHint: true, idempotentHint: true },
  run: async ({ name }, { core, session }) => {
    await attachSkills(core).delete(session.principal, name);
    return textResult(`Deleted skill ${name}.`);
  },
});
