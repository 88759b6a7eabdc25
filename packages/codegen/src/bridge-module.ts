import { stringLiteral } from "./names";

/**
 * Source of the `mcp/bridge` module. Models read it, and once its types are stripped it runs inside the
 * sandbox, so it is plain ES2020 with no Node APIs: its only way out is the sandbox's host-call global,
 * whose name the sandbox owns and the caller passes in. `callTool` mirrors `toolResultValue`.
 */
export function renderBridgeModule(hostCallGlobal: string): string {
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(hostCallGlobal))
    throw new TypeError(`The host-call global must be an identifier, not ${stringLiteral(hostCallGlobal)}.`);
  return BRIDGE_TEMPLATE.replaceAll("__HOST_CALL__", hostCallGlobal);
}

const BRIDGE_TEMPLATE = `/**
 * The bridge between snippets and MCP tools. Every wrapper module calls \`callTool\`.
 * The host validates the arguments against the tool's JSON Schema, makes the call and returns the raw result.
 */
declare function __HOST_CALL__(name: string, args: unknown): Promise<unknown>;
declare const console: { warn(...values: unknown[]): void };

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
  return (await __HOST_CALL__(name, args)) as CallToolResult;
}

/**
 * Calls a tool and resolves with its value: \`structuredContent\` if present, else the text content
 * (parts joined by "\\n") parsed as JSON when it is JSON, else that text; with no text part, the content array.
 * Throws a ToolError when the result has \`isError\`. Parts the value leaves out (an image beside the
 * text) are named on stderr; \`callToolRaw\` returns every part.
 */
export async function callTool(name: string, args: unknown): Promise<unknown> {
  // The host call itself, not callToolRaw: one async layer less on every call.
  const result = (await __HOST_CALL__(name, args)) as CallToolResult;
  if (result.isError) throw new ToolError(name, result);
  const others: string[] = [];
  for (const part of Array.isArray(result.content) ? result.content : []) if (part && part.type !== "text") others.push(part.type);
  if (others.length > 0) console.warn(\`\${name} also returned \${others.join(", ")} content; callToolRaw("\${name}", args) from "mcp/bridge" returns every part.\`);
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
