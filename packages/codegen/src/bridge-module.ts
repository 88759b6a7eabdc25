/**
 * Source of the `mcp/bridge` module. Models read it, and once its types are stripped it runs inside the
 * sandbox, so it is plain ES2020 with no Node APIs: its only way out is the host's `__host_call`.
 */
export const BRIDGE_SOURCE = `/**
 * The bridge between snippets and MCP tools. Every wrapper module calls \`callTool\`.
 * The host validates the arguments against the tool's JSON Schema, makes the call and returns the raw result.
 */
declare function __host_call(name: string, args: unknown): Promise<unknown>;

export interface TextContent { type: "text"; text: string }
export interface ImageContent { type: "image"; data: string; mimeType: string }
export interface AudioContent { type: "audio"; data: string; mimeType: string }
export interface ResourceLink { type: "resource_link"; uri: string; name: string; description?: string; mimeType?: string }
export interface EmbeddedResource { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

/** A tool's raw MCP result. */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Thrown by \`callTool\` when the tool reports an error (\`isError\`); the message is the server's. */
export class ToolError extends Error {
  declare readonly tool: string;
  declare readonly result: CallToolResult;
  constructor(tool: string, result: CallToolResult) {
    super(\`\${tool}: \${joinText(result) ?? "the tool reported an error without a message"}\`);
    this.name = "ToolError";
    this.tool = tool;
    this.result = result;
  }
}

/** Calls a tool by its qualified name (\`server__tool\`) and resolves with the raw result, errors included. */
export async function callToolRaw(name: string, args: unknown): Promise<CallToolResult> {
  return (await __host_call(name, args)) as CallToolResult;
}

/**
 * Calls a tool and resolves with its value: \`structuredContent\` if present, else the text content
 * (parts joined by "\\n") parsed as JSON when it is JSON, else that text; with no text part, the content array.
 * Throws a ToolError when the result has \`isError\`.
 */
export async function callTool(name: string, args: unknown): Promise<unknown> {
  const result = await callToolRaw(name, args);
  if (result.isError) throw new ToolError(name, result);
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  const text = joinText(result);
  if (text === undefined) return result.content;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function joinText(result: CallToolResult): string | undefined {
  const parts = Array.isArray(result.content) ? result.content : [];
  const texts: string[] = [];
  for (const part of parts) if (part && part.type === "text" && typeof part.text === "string") texts.push(part.text);
  return texts.length > 0 ? texts.join("\\n") : undefined;
}
`;
