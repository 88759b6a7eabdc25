import type { Surface } from "@codemux/core";
import { appOnlyTools, callListedTool, listedTool } from "../apps";
import { readResult } from "../meta-tools/read-result";
import { MetaToolRegistry } from "../meta-tools/registry";
import { PASSTHROUGH_HINTS } from "../render/hints";
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
      // A host that renders apps is also listed the tools only an app may call: the extension bids it keep them from its model.
      const downstream = [...services.access.catalog(session).entries(), ...appOnlyTools(services, session)].map(listedTool);
      return [...downstream, ...meta.definitions()];
    },
    // Not async: the call's promise is handed back as it is, without the turns an async function's returned promise costs.
    callTool: (name, args, request) => {
      try {
        if (meta.has(name) && !services.access.catalog(request.session).get(name)) return meta.call(name, args, request);
        return callListedTool(services, { name, args, request, origin: "passthrough" });
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
};
