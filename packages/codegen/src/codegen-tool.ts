/** One downstream tool as codegen needs it; the catalog computes the names. */
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
