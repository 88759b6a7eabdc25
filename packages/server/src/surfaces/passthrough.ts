import type { ToolDefinition, CallRequest } from "@codemux/core";
import { limitResult } from "../meta-tools/limit-result";
import { readResult } from "../meta-tools/read-result";
import { MetaToolRegistry } from "../meta-tools/registry";
import { errorResult } from "../render";
import type { Surface, SurfaceFactory } from "./surface";

/**
 * Mode `passthrough`: every downstream tool under its `server__tool` name, plus read_result, so the
 * handle in a large result's preview can be read back.
 */
export const passthroughSurface: SurfaceFactory = (core): Surface => {
  const meta = new MetaToolRegistry([readResult]);
  return {
    name: "passthrough",
    listChanges: true,
    instructions: () => undefined,
    listTools: async () => {
      await core.discovered();
      const downstream = core.catalog
        .entries()
        .map(
          (entry): ToolDefinition => ({ ...entry.tool, name: entry.qualifiedName, description: `[${entry.server}] ${entry.tool.description ?? ""}`.trim() }),
        );
      return [...downstream, ...meta.definitions()];
    },
    callTool: async (name, args, ctx) => {
      if (meta.has(name) && !core.catalog.get(name)) return meta.call(name, args, ctx);
      // Every downstream call of this mode comes through here: the request is built field by field.
      const request: CallRequest = { name, arguments: args, origin: "passthrough", session: ctx.session };
      if (ctx.signal) request.signal = ctx.signal;
      if (ctx.progress) request.progress = ctx.progress;
      if (ctx.requestId !== undefined) request.requestId = ctx.requestId;
      try {
        return await limitResult(core, { tool: name, result: await core.callTool(request), owner: ctx.session.id });
      } catch (error) {
        return errorResult(error, core.logger);
      }
    },
  };
};
