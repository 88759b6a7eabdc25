import type { Surface, ToolDefinition } from "@codemux/core";
import { readResult } from "../meta-tools/read-result";
import { MetaToolRegistry } from "../meta-tools/registry";
import { callRequest } from "../pipeline/call-request";
import { PASSTHROUGH_HINTS } from "../render/hints";
import { limitResult } from "../render/limit-result";
import { missingCapabilityUp, passedUp } from "../input-required";
import { errorResult } from "../render/text";
import { sessionInstructions } from "../render/instructions";
import type { SurfaceFactory } from "./surface";

/**
 * Mode `passthrough`: every downstream tool under its `server__tool` name, plus read_result, so the
 * handle in a large result's preview can be read back.
 */
export const passthroughSurface: SurfaceFactory = ({ services: shared, hints }): Surface => {
  const services = { ...shared, hints: hints ?? PASSTHROUGH_HINTS };
  const meta = new MetaToolRegistry(services, [readResult]);
  return {
    name: "passthrough",
    listChanges: true,
    // Each tool is listed as it is: the servers' own instructions are what there is to say.
    instructions: (session) => sessionInstructions(services, session, undefined),
    listTools: async (session) => {
      await services.readiness.discovered();
      const downstream = services.access
        .catalog(session)
        .entries()
        .map(
          (entry): ToolDefinition => ({ ...entry.tool, name: entry.qualifiedName, description: `[${entry.server}] ${entry.tool.description ?? ""}`.trim() }),
        );
      return [...downstream, ...meta.definitions()];
    },
    callTool: async (name, args, request) => {
      if (meta.has(name) && !services.access.catalog(request.session).get(name)) return meta.call(name, args, request);
      try {
        const result = await services.pipeline.call(callRequest({ name, args, origin: "passthrough" }, request));
        return await limitResult(services, { tool: name, result, owner: request.session });
      } catch (error) {
        return passedUp(error, { tool: name, request, states: services.requestStates }) ?? missingCapabilityUp(error, request) ?? errorResult(error, services);
      }
    },
  };
};
