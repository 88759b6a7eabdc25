import { VALUE_CALL_SUFFIX } from "@codemux/core";
import { stringLiteral } from "./names";

/**
 * Source of the `mcp/bridge` module. Models read it, and once its types are stripped it runs inside the
 * sandbox, so it is plain ES2020 with no Node APIs: its only way out is the sandbox's host-call global,
 * whose name the sandbox owns and the caller passes in. `callTool` asks the host for the value (`toolValueAnswer`).
 */
export function renderBridgeModule(hostCallGlobal: string): string {
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(hostCallGlobal))
    throw new TypeError(`The host-call global must be an identifier, not ${stringLiteral(hostCallGlobal)}.`);
  return BRIDGE_TEMPLATE.replaceAll("__HOST_CALL__", hostCallGlobal).replaceAll("__VALUE_SUFFIX__", VALUE_CALL_SUFFIX);
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
  constructor(tool: string, result: CallToolResult, message: string) {
    super(message);
    this.name = "ToolError";
    this.tool = tool;
    this.result = result;
  }
}

/** Calls a tool by its qualified name (\`server__tool\`) and resolves with the raw result, errors included. */
export async function callToolRaw(name: string, args: unknown): Promise<CallToolResult> {
  return (await __HOST_CALL__(name, args)) as CallToolResult;
}

/** The host's answer to a value call: the value (and a note on parts it left out), or the error. */
type ValueAnswer = { value: unknown; warning?: string; error?: undefined } | { error: { message: string; result: CallToolResult } };

/**
 * Calls a tool and resolves with its value: \`structuredContent\` if present, else the text content
 * (parts joined by "\\n") parsed as JSON when it is JSON, else that text; with no text part, the content array.
 * Throws a ToolError when the result has \`isError\`. Parts the value leaves out (an image beside the
 * text) are named on stderr; \`callToolRaw\` returns every part. The host computes the value; this forwards it.
 */
export async function callTool(name: string, args: unknown): Promise<unknown> {
  // Taken before the await: after it the engine's stack no longer holds the snippet's line that made the call.
  const site = new Error();
  const answer = (await __HOST_CALL__(name + "__VALUE_SUFFIX__", args)) as ValueAnswer;
  if (answer.error) {
    const error = new ToolError(name, answer.error.result, answer.error.message);
    // Its frames less this function's own: the place is the caller's (the snippet, or the module it called).
    const frames = (site.stack ?? "").split("\\n");
    const own = frames.findIndex((line) => line.includes(" at "));
    if (own !== -1) frames.splice(own, 1);
    error.stack = frames.join("\\n");
    throw error;
  }
  if (answer.warning) console.warn(answer.warning);
  return answer.value;
}
`;
