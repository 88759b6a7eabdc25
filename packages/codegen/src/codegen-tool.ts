import { qualifiedToolName, uniqueFunctionNames, type CatalogEntry, type ToolDefinition } from "@codemux/core";

/** One downstream tool as codegen needs it; `codegenTools` (or the catalog) computes the names. */
export interface CodegenTool {
  /** Server name: letters, digits, "-" and single "_". */
  server: string;
  /** The downstream tool name, e.g. `read_text_file`. */
  name: string;
  /** `<server>__<name>`, what the bridge calls. */
  qualifiedName: string;
  /** The wrapper's name, e.g. `readTextFile`: an identifier, unique within the server, not a reserved word. */
  functionName: string;
  title?: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of `structuredContent`, when the tool declares one. */
  outputSchema?: Record<string, unknown>;
  /** MCP tool annotations such as `readOnlyHint` and `destructiveHint`. */
  annotations?: Record<string, unknown>;
}

/**
 * One server's tools as tools/list gave them, named by the catalog's rules (the same names the
 * catalog gives), for using codegen without a catalog.
 *
 * @example
 * const tree = new ModuleTree({ hostCallGlobal: "__host_call" });
 * tree.setServer("fs", codegenTools("fs", toolsFromToolsList));
 */
export function codegenTools(server: string, tools: readonly ToolDefinition[]): CodegenTool[] {
  const functionNames = uniqueFunctionNames(tools.map((t) => t.name));
  const taken = new Set<string>();
  return tools.map((tool, i) => {
    const qualifiedName = qualifiedToolName(server, tool.name, (name) => taken.has(name));
    taken.add(qualifiedName);
    return fromParts({ server, name: tool.name, qualifiedName, functionName: functionNames[i] as string, tool });
  });
}

/** The catalog's entry as codegen takes it. */
export function codegenToolOf(entry: CatalogEntry): CodegenTool {
  return fromParts(entry);
}

function fromParts(parts: Pick<CatalogEntry, "server" | "name" | "qualifiedName" | "functionName" | "tool">): CodegenTool {
  const { tool } = parts;
  return {
    server: parts.server,
    name: parts.name,
    qualifiedName: parts.qualifiedName,
    functionName: parts.functionName,
    inputSchema: tool.inputSchema,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
  };
}
