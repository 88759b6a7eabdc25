import { defineMetaTool, type RequestContext, type ToolResult } from "@codemux/core";
import { BadRequestError } from "../errors";
import { callRequest } from "../pipeline/call-request";
import { limitResult } from "../render/limit-result";
import type { CodemuxServices } from "../services";
import { inBackground } from "./background";

export const callTool = defineMetaTool<
  {
    name: string;
    args?: Record<string, unknown>;
    arguments?: Record<string, unknown>;
    args_json?: string;
    background?: boolean;
    resultSizeThreshold?: number;
  },
  CodemuxServices
>({
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
      // Unlisted: the notice of a kept result names it; bytes, 0 = the global threshold, capped at MAX_INLINE_BYTES.
      resultSizeThreshold: { type: "integer", minimum: 0, unlisted: true },
    },
    required: ["name"],
  },
  run: ({ name, args, arguments: mcpArgs, args_json, background, resultSizeThreshold }, ctx) => {
    if (args !== undefined && mcpArgs !== undefined) throw new BadRequestError('"args" and "arguments" are the same field; send the arguments once.');
    const input = args ?? mcpArgs ?? (args_json !== undefined ? parseArgsJson(args_json) : {});
    const { services } = ctx;
    const call = (request: RequestContext & { job?: string }): Promise<ToolResult> =>
      services.pipeline
        .call(callRequest({ name, args: input }, request))
        .then((result) => limitResult(services, { tool: name, owner: ctx.session, result, threshold: resultSizeThreshold }));
    if (background)
      return inBackground(ctx, {
        kind: "call_tool",
        description: name,
        request: { name, args: input },
        run: ({ signal, progress, job }) =>
          call({ session: ctx.session, origin: "job", signal, progress, job, ...(ctx.requestId !== undefined ? { requestId: ctx.requestId } : {}) }),
      });
    // An MCP client's call is "call_tool"; the CLI and REST pass their own origin through.
    return call(ctx);
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
