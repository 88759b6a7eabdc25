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
  return Object.assign(body, executionOutput(run));
}

/** What a run printed, its time and its calls: the part of `executionBody` after the result or error. */
function executionOutput(run: ExecuteResult): Record<string, unknown> {
  const output: Record<string, unknown> = {};
  if (run.stdout) output.stdout = run.stdout;
  if (run.stderr) output.stderr = run.stderr;
  output.durationMs = Math.round(run.durationMs);
  output.toolCalls = run.calls;
  return output;
}

/** The snippet's outcome as compact JSON for a model, with the answer's own size in tokens. */
export function executionResult(run: ExecuteResult): ToolResult {
  const json = executionJson(run);
  // The answer's own size, so the model can weigh reading it again against processing it in the snippet.
  const text = `${json.slice(0, -1)},"estimatedTokens":${estimateTokens(json) + 6}}`;
  return { content: [{ type: "text", text }], ...(run.ok ? {} : { isError: true }) };
}

/** `executionBody` as JSON text; the value goes in as the sandbox wrote it (`resultJson`), never parsed and written again here. */
export function executionJson(run: ExecuteResult): string {
  if (!run.ok || run.resultJson === undefined) return JSON.stringify(executionBody(run));
  return `{"result":${run.resultJson},${JSON.stringify(executionOutput(run)).slice(1)}`;
}
