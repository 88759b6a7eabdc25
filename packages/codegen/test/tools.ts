import type { ToolDefinition } from "@codemux/core";
import { readFileSync } from "node:fs";
export { codegenTools } from "../src/index";

/** The host-call global the sandbox gives snippets; tests pass it as the server does. */
export const HOST_CALL = "__host_call";

/** A tool as tools/list returns it. */
export type ListedTool = ToolDefinition;

export function readToolList(path: string | URL): ListedTool[] {
  return JSON.parse(readFileSync(path, "utf8")) as ListedTool[];
}
