import { toolResultValue } from "@codemux/core";
import type { Command } from "commander";
import { withCore, type RunContext } from "../context";
import { UsageError } from "../errors";
import { answerText, printAnswer } from "./shared";

/** `codemux call`: one tool through the same pipeline, printing the value a snippet would get. */
export function registerCall(program: Command, context: RunContext): void {
  program
    .command("call")
    .description("call one tool by its server__tool name and print its value (structured content, else text)")
    .argument("<name>", "server__tool")
    .argument("[json]", "arguments as a JSON object", "{}")
    .action(async (name: string, json: string, _options, command: Command) => {
      const args = parseJsonObject(json);
      await withCore(command, context, async (core) => {
        const result = await core.surface("code").callTool("call_tool", { name, args }, { core, session: core.session(), origin: "cli" });
        const value = result.isError ? undefined : toolResultValue(result);
        printAnswer(context, result, value === undefined ? answerText(result) : typeof value === "string" ? value : JSON.stringify(value, null, 2));
      });
    });
}

function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`The arguments are not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new UsageError('The arguments must be a JSON object, like \'{"path": "README.md"}\'.');
  return value as Record<string, unknown>;
}
