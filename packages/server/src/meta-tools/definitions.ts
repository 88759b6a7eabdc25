import type { Tool } from "@modelcontextprotocol/sdk/types.js";

// These descriptions are the whole upfront cost of codemux in the model's context: every word earns its place.
export const searchToolsDefinition: Tool = {
  name: "search_tools",
  description:
    "Find tools of the connected MCP servers by describing the task in a few words (\"create github issue\", \"read file\"). Matches names, descriptions and parameters, with synonyms and typos. Returns server__tool names, module paths and signatures.",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "What you want to do." },
      limit: { type: "integer", minimum: 1, maximum: 50, default: 10 },
      server: { type: "string", description: "Only this server's tools." },
      detail: { type: "string", enum: ["name", "summary", "full"], default: "summary", description: "full adds input schemas." },
    },
    required: ["query"],
  },
  annotations: { readOnlyHint: true },
};

export const listModulesDefinition: Tool = {
  name: "list_modules",
  description: "List importable modules: servers at the top, a server's tool modules with signatures under path (\"mcp/servers/github\").",
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
  annotations: { readOnlyHint: true },
};

export const readModuleDefinition: Tool = {
  name: "read_module",
  description: "Show a module's TypeScript: typed input, output and docs (\"mcp/servers/github/createIssue\").",
  inputSchema: { type: "object", properties: { specifier: { type: "string" } }, required: ["specifier"] },
  annotations: { readOnlyHint: true },
};

export const executeCodeDefinition: Tool = {
  name: "execute_code",
  description:
    "Run a TypeScript module in a sandbox to chain tools without passing data through you. Import tools as async functions (import { readTextFile } from \"mcp/servers/fs/readTextFile\"); each returns the tool's value (structured result, parsed JSON or text) and throws on tool errors. Returns export default (as JSON), console output and errors. No network, files or process: tools are the only way out; Promise.all runs calls concurrently.",
  inputSchema: {
    type: "object",
    properties: {
      code: { type: "string" },
      timeoutMs: { type: "integer", minimum: 100, maximum: 60000, default: 30000 },
    },
    required: ["code"],
  },
};

export const callToolDefinition: Tool = {
  name: "call_tool",
  description: "Call one tool by its server__tool name. Prefer execute_code to chain calls.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string" },
      args: { type: "object", description: "The tool's arguments." },
    },
    required: ["name"],
  },
};

export const readResultDefinition: Tool = {
  name: "read_result",
  description: "Page through a large result codemux kept (handle from its preview): stat, head/tail N lines, slice lines from..to, grep a regex with context.",
  inputSchema: {
    type: "object",
    properties: {
      handle: { type: "string" },
      op: { type: "string", enum: ["stat", "head", "tail", "slice", "grep"] },
      lines: { type: "integer", minimum: 1, description: "head/tail count (default 50)" },
      from: { type: "integer", minimum: 1 },
      to: { type: "integer", minimum: 1 },
      pattern: { type: "string" },
      context: { type: "integer", minimum: 0, maximum: 20 },
    },
    required: ["handle", "op"],
  },
  annotations: { readOnlyHint: true },
};

/** The upfront tool list of mode `code`, in the order clients show it. */
export const META_TOOLS: readonly Tool[] = [
  searchToolsDefinition,
  listModulesDefinition,
  readModuleDefinition,
  executeCodeDefinition,
  callToolDefinition,
  readResultDefinition,
];
