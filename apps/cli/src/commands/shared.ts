import type { ToolResult } from "@codemux/core";
import { InvalidArgumentError } from "commander";
import type { RunContext } from "../context";

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

/** The text of an answer, as the model reads it. */
export function answerText(result: ToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** A meta-tool's answer as the model reads it; an error answer sets exit code 1. */
export function printAnswer(context: RunContext, result: ToolResult, text = answerText(result)): void {
  context.stdout.write(`${text}\n`);
  if (result.isError) context.exitCode = 1;
}
