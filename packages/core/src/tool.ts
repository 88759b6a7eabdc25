/** MCP tool annotations: hints about what a tool does, from its server (untrusted, advisory). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}

/**
 * An MCP tool definition as it flows through codemux: the pool lists it, the catalog names it,
 * codegen renders it, the server passes it on. Structurally the SDK's `Tool`.
 */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: "object"; properties?: Record<string, object>; required?: string[]; [key: string]: unknown };
  outputSchema?: { type: "object"; properties?: Record<string, object>; required?: string[]; [key: string]: unknown };
  annotations?: ToolAnnotations;
  [key: string]: unknown;
}

/** A tool as codemux presents it: where it comes from and the names it goes by. */
export interface CatalogEntry {
  /** `server__tool`, at most 64 characters, unique in the catalog. */
  qualifiedName: string;
  server: string;
  /** The downstream's own tool name. */
  name: string;
  /** camelCase, unique within the server, never a reserved word. */
  functionName: string;
  /** `mcp/servers/<server>/<functionName>` */
  moduleSpecifier: string;
  /** `readTextFile({ path: string, head?: number })` */
  signature: string;
  /** The description's first sentence, kept short. */
  summary: string;
  tool: ToolDefinition;
}
