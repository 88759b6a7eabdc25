import type { ClientCapabilities } from "./mcp";

/** The identifier of the MCP Tasks extension (protocol 2026-07-28, SEP-2663). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** Whether a request's capabilities declare the Tasks extension. */
export function declaresTasks(capabilities: ClientCapabilities | undefined): boolean {
  const extensions = capabilities?.extensions;
  return typeof extensions === "object" && extensions !== null && TASKS_EXTENSION in extensions;
}
