import { defineMetaTool, textResult } from "@codemux/core";
import { BadRequestError } from "../errors";
import type { CodemuxServices } from "../services";
import { waitForImports } from "../snippets";
import { MAX_SKILL_CODE_BYTES } from "../skills/names";

// One tool for saving and deleting: a separate delete tool cost ~57 upfront tokens for a rare action.
export const saveSkill = defineMetaTool<{ name: string; code?: string; description?: string; delete?: boolean }, CodemuxServices>({
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
  run: async ({ name, code, description, delete: remove }, { services, session }) => {
    const { skills } = services;
    if (remove) {
      if (code !== undefined || description !== undefined) throw new BadRequestError('delete: true takes only "name"; leave out code and description.');
      await skills.delete(session.principal, name);
      return textResult(`Deleted skill ${name}.`);
    }
    if (code === undefined) throw new BadRequestError('"code" is required to save a skill (or pass delete: true to delete one).');
    // Right after start a server it imports may still be connecting: its modules would not be there to check against.
    await waitForImports(services.readiness, code);
    const claims = { ...(session.groups ? { groups: session.groups } : {}), ...(session.scopes ? { scopes: session.scopes } : {}) };
    const skill = await skills.save(session.principal, { name, code, ...(description !== undefined ? { description } : {}) }, claims);
    return textResult(
      `Saved mcp/skills/${skill.name}: ${skill.signature}\nImport it in execute_code: import { ${skill.name} } from "mcp/skills/${skill.name}";`,
    );
  },
});
