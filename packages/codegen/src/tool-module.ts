import { BRIDGE_SPECIFIER } from "@codemux/core";
import type { CodegenTool } from "./codegen-tool";
import { jsDoc } from "./jsdoc";
import { pascalCase, stringLiteral } from "./names";
import { TypeModule } from "./schema/type-module";

export interface ToolTypeNames {
  input: string;
  output: string;
}

export function toolTypeNames(functionName: string): ToolTypeNames {
  const pascal = pascalCase(functionName);
  return { input: `${pascal}Input`, output: `${pascal}Output` };
}

/** The wrapper module of one tool: its input and output types and an async function that calls it. */
export function renderToolModule(tool: CodegenTool): string {
  const names = toolTypeNames(tool.functionName);
  // A tool whose function is itself named callTool must not shadow the bridge's.
  const call = tool.functionName === "callTool" ? "bridgeCallTool" : "callTool";
  const types = new TypeModule({ reservedNames: [names.input, names.output, tool.functionName, call] });
  types.declare(tool.inputSchema, { name: names.input, empty: "record" });
  if (tool.outputSchema !== undefined) types.declare(tool.outputSchema, { name: names.output, empty: "record" });
  const output = tool.outputSchema === undefined ? `export type ${names.output} = unknown;\n\n` : "";
  const parameter = acceptsNoArguments(tool.inputSchema) ? `input: ${names.input} = {}` : `input: ${names.input}`;
  const importLine = `import { ${call === "callTool" ? "callTool" : "callTool as bridgeCallTool"} } from ${stringLiteral(BRIDGE_SPECIFIER)};`;
  return (
    `${importLine}\n\n${types.source()}\n${output}` +
    jsDoc(toolDocLines(tool)) +
    `export async function ${tool.functionName}(${parameter}): Promise<${names.output}> {\n` +
    `  return (await ${call}(${stringLiteral(tool.qualifiedName)}, input)) as ${names.output};\n}\n`
  );
}

function toolDocLines(tool: CodegenTool): string[] {
  const title = tool.title ?? (typeof tool.annotations?.title === "string" ? tool.annotations.title : undefined);
  const lines: string[] = [];
  if (title !== undefined && title !== tool.description && lettersOf(title) !== lettersOf(tool.name)) lines.push(title, "");
  if (tool.description !== undefined) lines.push(tool.description, "");
  const hints = annotationHints(tool.annotations ?? {});
  if (hints.length > 0) lines.push(`Hints: ${hints.join(", ")}.`);
  return lines;
}

/** "Read Text File" and "read_text_file" say the same; such a title adds nothing the function name lacks. */
function lettersOf(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, "");
}

function annotationHints(annotations: Record<string, unknown>): string[] {
  const hints: string[] = [];
  if (annotations.readOnlyHint === true) hints.push("read-only");
  if (annotations.destructiveHint === true) hints.push("destructive (may delete or overwrite data)");
  if (annotations.destructiveHint === false && annotations.readOnlyHint !== true) hints.push("not destructive");
  if (annotations.idempotentHint === true) hints.push("idempotent");
  if (annotations.openWorldHint === true) hints.push("open world (reaches external systems)");
  return hints;
}

/** True when `{}` is a valid input, so the wrapper's argument can default to it. */
function acceptsNoArguments(schema: Record<string, unknown>): boolean {
  if (["$ref", "anyOf", "oneOf", "allOf", "const", "enum"].some((key) => schema[key] !== undefined)) return false;
  if (schema.type !== undefined && schema.type !== "object") return false;
  return !Array.isArray(schema.required) || schema.required.length === 0;
}
