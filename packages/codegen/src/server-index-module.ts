import { serverModuleSpecifier, toolModuleSpecifier } from "@codemux/core";
import type { CodegenTool } from "./codegen-tool";
import { stringLiteral } from "./names";
import { toolTypeNames } from "./tool-module";

/** The `mcp/servers/<server>` module: every tool's function and types, re-exported from their own modules. */
export function renderServerIndexModule(server: string, tools: readonly CodegenTool[]): string {
  const header = `/** Tools of server "${server}". Each is also its own module: "${serverModuleSpecifier(server)}/<function>". */\n`;
  const lines = tools.map((tool) => {
    const names = toolTypeNames(tool.functionName);
    const from = stringLiteral(toolModuleSpecifier(server, tool.functionName));
    return `export { ${tool.functionName}, type ${names.input}, type ${names.output} } from ${from};\n`;
  });
  // With no tools the file still has to be a module for `import ... from "mcp/servers/<server>"` to check.
  return header + (lines.length > 0 ? lines.join("") : "export {};\n");
}
