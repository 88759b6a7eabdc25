import type { CodegenTool } from "./codegen-tool";
import { jsDoc } from "./jsdoc";
import { generateZodSource } from "./zod-source";

/** The on-disk `servers/<server>/schemas.ts`: a zod schema of each tool's input, named `<function>Input`. */
export function renderSchemasModule(tools: readonly CodegenTool[]): string {
  const schemas = tools.map(
    (tool) =>
      `${jsDoc([`Arguments of ${tool.functionName} (${tool.qualifiedName}).`])}` +
      `export const ${tool.functionName}Input = ${generateZodSource(tool.inputSchema)};\n`,
  );
  return `import { z } from "zod";\n\n${schemas.join("\n")}`;
}
