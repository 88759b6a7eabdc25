import type { ExecuteResult } from "@codemux/sandbox";
import { isCodemuxError, type Logger, type ToolResult, estimateTokens } from "@codemux/core";
import type { AnswerHints } from "./hints";

/**
 * Every failure reaches the model as a sentence in an error result, never a stack trace. An error a
 * codemux package raised on purpose (it carries the brand) is its own message, with the surface's
 * way to find tools after it when the error asks for one (`data.hint: "findTools"`); anything else
 * (a bug, a Node system error) is named as codemux's own failure and logged, so it never passes for a
 * tool's answer.
 */
export function errorResult(error: unknown, context: { logger?: Logger; hints?: AnswerHints } = {}): ToolResult {
  return { content: [{ type: "text", text: errorText(error, context) }], isError: true };
}

/** The sentence of `errorResult`, for front ends that answer in other shapes (REST, the CLI). */
export function errorText(error: unknown, context: { logger?: Logger; hints?: AnswerHints } = {}): string {
  if (isCodemuxError(error)) {
    // "... Names look like "server__tool"; search_tools finds them." (each front end's own way after the semicolon)
    if (error.data?.hint === "findTools" && context.hints) return `${error.message.replace(/\.$/, "")}; ${context.hints.findTools}.`;
    return error.message;
  }
  const message = error instanceof Error ? error.message : String(error);
  context.logger?.error(`internal error: ${error instanceof Error && error.stack ? error.stack : message}`);
  return `codemux internal error: ${message.slice(0, 500)}`;
}

/** An error a snippet's call raised, with the front end's way to find tools when it asks for one; else the error itself. */
export function withFindTools(error: unknown, hints: AnswerHints): unknown {
  return isCodemuxError(error) && error.data?.hint === "findTools" ? new Error(errorText(error, { hints })) : error;
}

/** A snippet's outcome as data every front end answers with: result (or error, with its kind and position), output, time and calls. */
export function executionBody(run: ExecuteResult): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (run.ok) body.result = run.result ?? null;
  else body.error = run.error;
  if (run.stdout) body.stdout = run.stdout;
  if (run.stderr) body.stderr = run.stderr;
  body.durationMs = Math.round(run.durationMs);
  body.toolCalls = run.calls;
  return body;
}

/** The snippet's outcome as compact JSON for a model, with the answer's own size in tokens. */
export function executionResult(run: ExecuteResult): ToolResult {
  const json = JSON.stringify(executionBody(run));
  // The answer's own size, so the model can weigh reading it again against processing it in the snippet.
  const text = `${json.slice(0, -1)},"estimatedTokens":${estimateTokens(json) + 6}}`;
  return { content: [{ type: "text", text }], ...(run.ok ? {} : { isError: true }) };
}
