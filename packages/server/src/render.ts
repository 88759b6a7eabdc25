import type { ExecuteResult } from "@codemux/sandbox";
import { isCodemuxError, type Logger, type ToolResult, estimateTokens } from "@codemux/core";

/** A text answer. */
export function textResult(value: string): ToolResult {
  return { content: [{ type: "text", text: value }] };
}

/**
 * Every failure reaches the model as a sentence in an error result, never a stack trace. An error a
 * codemux package raised on purpose (it carries the brand) is its own message; anything else (a bug,
 * a Node system error) is named as codemux's own failure and logged, so it never passes for a tool's answer.
 */
export function errorResult(error: unknown, logger?: Logger): ToolResult {
  if (isCodemuxError(error)) return { content: [{ type: "text", text: error.message }], isError: true };
  const message = error instanceof Error ? error.message : String(error);
  logger?.error(`internal error: ${error instanceof Error && error.stack ? error.stack : message}`);
  return { content: [{ type: "text", text: `codemux internal error: ${message.slice(0, 500)}` }], isError: true };
}

/** The snippet's outcome as compact JSON: result, output, time and calls; an error names its kind and position. */
export function executionResult(run: ExecuteResult): ToolResult {
  const body: Record<string, unknown> = {};
  if (run.ok) body.result = run.result ?? null;
  else body.error = run.error;
  if (run.stdout) body.stdout = run.stdout;
  if (run.stderr) body.stderr = run.stderr;
  body.durationMs = Math.round(run.durationMs);
  body.toolCalls = run.calls;
  const json = JSON.stringify(body);
  // The answer's own size, so the model can weigh reading it again against processing it in the snippet.
  const text = `${json.slice(0, -1)},"estimatedTokens":${estimateTokens(json) + 6}}`;
  return { content: [{ type: "text", text }], ...(run.ok ? {} : { isError: true }) };
}
