import type { ToolResult, CallRequest } from "@codemux/core";
import { BadRequestError } from "../errors";
import { inBackground } from "./background";
import { limitResult } from "./limit-result";
import { defineMetaTool } from "./registry";

export const callTool = defineMetaTool<{
  name: string;
  args?: Record<string, unknown>;
  arguments?: Record<string, unknown>;
  args_json?: string;
  background?: boolean;
}>({
  name: "call_tool",
  description: "Call one tool by server__tool name.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string" },
      args: { type: "object" },
      // Unlisted: MCP's own name for the arguments, the same as args.
      arguments: { type: "object", unlisted: true },
      // Unlisted: args sent as a JSON string are read as an object anyway; kept for callers that name it.
      args_json: { type: "string", unlisted: true },
      background: { type: "boolean" },
    },
    required: ["name"],
  },
  run: ({ name, args, arguments: mcpArgs, args_json, background }, ctx) => {
    if (args !== undefined && mcpArgs !== undefined) throw new BadRequestError('"args" and "arguments" are the same field; send the arguments once.');
    const input = args ?? mcpArgs ?? (args_json !== undefined ? parseArgsJson(args_json) : {});
    const call = ({
      signal,
      progress,
      origin,
      job,
    }: {
      signal: AbortSignal | undefined;
      progress: typeof ctx.progress;
      origin: string;
      job?: string;
    }): Promise<ToolResult> => {
      const request: CallRequest = { name, arguments: input, origin, session: ctx.session };
      if (signal) request.signal = signal;
      if (progress) request.progress = progress;
      if (ctx.requestId !== undefined) request.requestId = ctx.requestId;
      if (job !== undefined) request.job = job;
      return ctx.core.callTool(request).then((result) => limitResult(ctx.core, { tool: name, owner: ctx.session.id, result }));
    };
    if (background)
      return inBackground(ctx, {
        kind: "call_tool",
        description: name,
        request: { name, args: input },
        run: ({ signal, progress, job }) => call({ signal, progress, origin: "job", job }),
      });
    // An MCP client's call is "call_tool"; the CLI and REST pass their own origin through.
    return call({ signal: ctx.signal, progress: ctx.progress, origin: ctx.origin });
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
