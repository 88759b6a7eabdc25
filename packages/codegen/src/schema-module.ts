import type { CodegenTool } from "./codegen-tool";
import { jsDoc } from "./jsdoc";

/**
 * The `<function>.schema` module of one tool: its input's JSON Schema as `schema`, and its output's as
 * `outputSchema` when it declares one. Plain data, so a snippet can import it with no zod in the sandbox.
 */
export function renderSchemaModule(tool: CodegenTool): string {
  const input = `${jsDoc([`JSON Schema of the input of ${tool.functionName} (${tool.qualifiedName}).`])}export const schema = ${objectLiteral(tool.inputSchema)};\n`;
  if (tool.outputSchema === undefined) return input;
  return `${input}\n${jsDoc([`JSON Schema of the structured output of ${tool.functionName}.`])}export const outputSchema = ${objectLiteral(tool.outputSchema)};\n`;
}

/** JSON as a JavaScript object literal; a `__proto__` key is computed, since a literal one would set the prototype instead. */
function objectLiteral(value: Record<string, unknown>): string {
  // Pretty-printed JSON puts every key at the start of a line, where no string's text can be (its newlines are escaped).
  return JSON.stringify(value, null, 2).replace(/^(\s*)"__proto__":/gm, '$1["__proto__"]:');
}
