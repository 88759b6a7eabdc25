import type { Surface } from "@codemux/core";
import { besideApps } from "../apps";
import { callTool } from "../meta-tools/call-tool";
import { executeCode } from "../meta-tools/execute-code";
import { listModules, readModule } from "../meta-tools/modules";
import { readResult } from "../meta-tools/read-result";
import { MetaToolRegistry } from "../meta-tools/registry";
import { searchTools } from "../meta-tools/search-tools";
import { saveSkill } from "../meta-tools/skills";
import { CODE_HINTS } from "../render/hints";
import { sessionInstructions } from "../render/instructions";
import type { SurfaceFactory } from "./surface";

/** The meta-tools of mode `code`, in the order clients show them. */
export const CODE_META_TOOLS = [searchTools, listModules, readModule, executeCode, callTool, readResult, saveSkill] as const;

/** Mode `code` (the default): a few meta-tools instead of every downstream tool. */
export const codeSurface: SurfaceFactory = ({ services, metaTools, hints }): Surface => {
  const hinted = { ...services, hints: hints ?? CODE_HINTS };
  const registry = new MetaToolRegistry(hinted, [...CODE_META_TOOLS, ...metaTools]);
  return besideApps(
    hinted,
    {
      name: "code",
      listChanges: false,
      instructions: (session) =>
        sessionInstructions(
          services,
          session,
          "codemux connects you to many MCP servers' tools without listing them all. search_tools finds tools; read_module shows one as a typed TypeScript function; execute_code runs TypeScript that imports and chains them, so only the final answer comes back. call_tool calls one tool directly.",
        ),
      listTools: async (session) => registry.definitions(session),
      callTool: (name, args, request) => registry.call(name, args, request),
    },
    { origin: "call_tool", own: (name) => registry.has(name) },
  );
};
