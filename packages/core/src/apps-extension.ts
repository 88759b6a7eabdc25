import type { ClientCapabilities } from "./mcp";
import type { ToolDefinition } from "./tool";

/** The identifier of the MCP Apps extension (SEP-1865): tools that show an HTML app held in a `ui://` resource. */
export const APPS_EXTENSION = "io.modelcontextprotocol/ui";

/** The MIME type of an MCP App's HTML resource. */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/** The call origin of a tool that only an app may call (`_meta.ui.visibility` without "model"). */
export const APP_ORIGIN = "app";

/** Whether a client's capabilities declare the Apps extension (a host that renders MCP Apps). */
export function declaresApps(capabilities: ClientCapabilities | undefined): boolean {
  const extensions = capabilities?.extensions;
  return typeof extensions === "object" && extensions !== null && APPS_EXTENSION in extensions;
}

/** The `ui://` resource a tool shows its result in: `_meta.ui.resourceUri`, or the deprecated flat `_meta["ui/resourceUri"]`. */
export function appResourceUri(tool: ToolDefinition): string | undefined {
  const meta = tool._meta as { ui?: { resourceUri?: unknown }; "ui/resourceUri"?: unknown } | undefined;
  const uri = meta?.ui?.resourceUri ?? meta?.["ui/resourceUri"];
  return typeof uri === "string" ? uri : undefined;
}

/** Whether only an app may call the tool: `_meta.ui.visibility` is given and leaves out "model" (the default is both). */
export function isAppOnly(tool: ToolDefinition): boolean {
  const visibility = (tool._meta as { ui?: { visibility?: unknown } } | undefined)?.ui?.visibility;
  return Array.isArray(visibility) && !visibility.includes("model");
}
