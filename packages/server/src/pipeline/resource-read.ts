import { SEPARATOR, type CatalogEntry, type ToolResult } from "@codemux/core";
import type { ReadResourceResult } from "@modelcontextprotocol/server";
import { ResourceReadError } from "../errors";

/** The name a resource read goes by in the call pipeline: plugins see `<server>__resources/read` with `{ uri }`. */
export const RESOURCE_READ = "resources/read";

const entries = new WeakSet<CatalogEntry>();

/** The pipeline entry of one server's resource reads (read-only; its only argument is the URI). */
export function resourceReadEntry(server: string): CatalogEntry {
  const entry: CatalogEntry = {
    qualifiedName: `${server}${SEPARATOR}${RESOURCE_READ}`,
    server,
    name: RESOURCE_READ,
    functionName: "readResource",
    moduleSpecifier: "mcp/resources",
    signature: "readResource(uri: string)",
    summary: "Read one resource of the server.",
    tool: {
      name: RESOURCE_READ,
      description: "Read one resource of the server.",
      inputSchema: { type: "object", properties: { uri: { type: "string" } }, required: ["uri"] },
      annotations: { readOnlyHint: true },
    },
  };
  entries.add(entry);
  return entry;
}

/** True for an entry made by `resourceReadEntry`: a tool that happens to be named resources/read is still a tool. */
export function isResourceReadEntry(entry: CatalogEntry): boolean {
  return entries.has(entry);
}

/** A resource's contents as a tool result, one embedded resource part each, for the plugins to see. */
export function resourceAsToolResult(result: ReadResourceResult): ToolResult {
  return { content: result.contents.map((resource) => ({ type: "resource", resource })), ...(result._meta ? { _meta: result._meta } : {}) };
}

/** The contents back from the result the plugins let through; a text part (a plugin's answer) is read as text of the resource. */
export function toolResultAsResource(result: ToolResult, uri: string): ReadResourceResult {
  const text = result.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
  if (result.isError) throw new ResourceReadError(uri, text || "the read was refused without a reason.");
  const contents = result.content.flatMap((part): ReadResourceResult["contents"] => {
    if (part.type === "resource") return [part.resource];
    if (part.type === "text") return [{ uri, mimeType: "text/plain", text: part.text }];
    return [];
  });
  return { contents, ...(result._meta ? { _meta: result._meta } : {}) };
}
