import { BadRequestError } from "../errors";
import { limitResult } from "./limit-result";
import { defineMetaTool } from "./registry";

export const callTool = defineMetaTool<{ name: string; args?: Record<string, unknown>; args_json?: string }>({
  name: "call_tool",
  description: "Call one tool by its server__tool name. Prefer execute_code to chain calls.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "server__tool, as search_tools shows it." },
      args: { type: "object", description: "The tool's arguments." },
      args_json: { type: "string", description: "The arguments as a JSON string, if you cannot send an object." },
    },
    required: ["name"],
  },
  run: async ({ name, args, args_json }, ctx) => {
    const result = await ctx.core.callTool({
      name,
      arguments: args ?? (args_json !== undefined ? parseArgsJson(args_json) : {}),
      origin: "call_tool",
      session: ctx.session,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.progress ? { progress: ctx.progress } : {}),
    });
    return limitResult(ctx.core, { tool: name, result, owner: ctx.session.id });
  },
});

/** `args_json`: the arguments as a JSON string, for clients that can only send strings. */
function parseArgsJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`"args_json" is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}
