import type { InputRequiredResult, ToolResult } from "./mcp";

/** A text answer. */
export function textResult(text: string): ToolResult {
  return { content: [{ type: "text", text }] };
}

/** Whether a call's answer is a 2026-07-28 server's `input_required` (questions to answer before a retry), not a result. */
export function isInputRequired(result: ToolResult): result is InputRequiredResult {
  return result.resultType === "input_required";
}

/** The parts of a tool result the value rule reads. */
export interface ToolResultLike {
  content?: ReadonlyArray<{ type: string; text?: unknown }>;
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * What a tool's result is worth to code: `structuredContent` if present, else the text parts
 * (joined by "\n") parsed as JSON when they are JSON, else that text; with no text part, the
 * content array. The one rule: the CLI prints it, wrappers in the sandbox return it, REST answers it.
 */
export function toolResultValue(result: ToolResultLike): unknown {
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  const text = joinedText(result);
  if (text === undefined) return result.content ?? [];
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The text parts joined by "\n"; undefined when there is none. */
export function joinedText(result: ToolResultLike): string | undefined {
  const parts = Array.isArray(result.content) ? result.content : [];
  const texts: string[] = [];
  for (const part of parts) if (part && part.type === "text" && typeof part.text === "string") texts.push(part.text);
  return texts.length > 0 ? texts.join("\n") : undefined;
}

/** Content parts that are not text (images, audio, resources): the value leaves them out, so a caller says so. */
export function otherContentKinds(result: ToolResultLike): string[] {
  const parts = Array.isArray(result.content) ? result.content : [];
  return parts.filter((part) => part && part.type !== "text").map((part) => String(part.type));
}

/**
 * A host call that asks for a tool's value rather than its raw result: the bridge's `callTool`
 * calls `<server__tool>` + this suffix, and the host answers with a `ToolValueAnswer`.
 */
export const VALUE_CALL_SUFFIX = "#value";

/** What the host answers a value call with: the value (and a note on the parts it left out), or the error result. */
export type ToolValueAnswer = { value: unknown; warning?: string } | { error: { message: string; result: unknown } };

/**
 * The host's one turn of a result into what `callTool` resolves with (or throws), so the guest
 * bridge only forwards: the value by `toolResultValue`, a warning naming the content it leaves
 * out, or for `isError` the message a ToolError carries.
 */
export function toolValueAnswer(tool: string, result: ToolResultLike): ToolValueAnswer {
  if (result.isError) return { error: { message: `${tool}: ${joinedText(result) ?? "the tool reported an error without a message"}`, result } };
  const others = otherContentKinds(result);
  const value = toolResultValue(result);
  if (others.length === 0) return { value };
  return { value, warning: `${tool} also returned ${others.join(", ")} content; callToolRaw("${tool}", args) from "mcp/bridge" returns every part.` };
}
