import { BadRequestError } from "../errors";
import { MAX_SKILL_CODE_BYTES } from "../skills/names";
import { attachSkills } from "../skills/attach";
import { textResult } from "../render";
import { defineMetaTool } from "./registry";

// One tool for saving and deleting: a separate delete tool cost ~57 upfront tokens for a rare action.
export const saveSkill = defineMetaTool<{ name: string; code?: string; description?: string; delete?: boolean }>({
  name: "save_skill",
  description: "Save working code as mcp/skills/<name> (export async function <name>(input)); delete: true removes it.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 64 },
      code: { type: "string", maxLength: MAX_SKILL_CODE_BYTES },
      description: { type: "string", maxLength: 1000 },
      delete: { type: "boolean" },
    },
    required: ["name"],
  },
  run: async ({ name, code, description, delete: remove }, { core, session }) => {
    const skills = attachSkills(core);
    if (remove) {
      if (code !== undefined || description !== undefined) throw new BadRequestError('delete: true takes only "name"; leave out code and description.');
      await skills.delete(session.principal, name);
      return textResult(`Deleted skill ${name}.`);
    }
    if (code === undefined) throw new BadRequestError('"code" is required to save a skill (or pass delete: true to delete one).');
    if (description === undefined) throw new BadRequestError('"description" is required: say what the skill does, search_tools finds skills by it.');
    const skill = await skills.save(session.principal, { name, code, description });
    return textResult(
      `Saved mcp/skills/${skill.name}: ${skill.signature}\nImport it in execute_code: import { ${skill.name} } from "mcp/skills/${skill.name}";`,
    );
  },
});
