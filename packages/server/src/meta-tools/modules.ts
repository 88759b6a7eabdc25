import type { Catalog } from "@codemux/catalog";
import type { ModuleTree } from "@codemux/codegen";
import { BadRequestError } from "../errors";

/** Accepts `mcp/servers/fs/readTextFile` (and the same without `mcp/`); refuses absolute paths and `..`. */
export function normalizeSpecifier(input: string): string {
  const text = input.trim().replace(/\.(d\.)?ts$/, "");
  if (!text) throw new BadRequestError("The module path is empty; list_modules shows what exists.");
  if (text.startsWith("/") || text.startsWith("\\") || /^[A-Za-z]:/.test(text) || text.includes("\0")) {
    throw new BadRequestError(`"${input}" is an absolute path; modules are named like "mcp/servers/fs/readTextFile".`);
  }
  const parts = text.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (parts.some((p) => p === "..")) throw new BadRequestError(`"${input}" climbs with ".."; modules are named like "mcp/servers/fs/readTextFile".`);
  if (parts[0] !== "mcp") parts.unshift("mcp");
  return parts.join("/");
}

export function listModules(catalog: Catalog, modules: ModuleTree, path: string | undefined): string {
  const specifier = path ? normalizeSpecifier(path) : "mcp";
  if (specifier === "mcp" || specifier === "mcp/servers") {
    const servers = catalog.servers();
    if (servers.length === 0) return "No servers are connected yet.";
    return [
      ...servers.map((s) => `mcp/servers/${s}  (${catalog.entries(s).length} tools)`),
      "mcp/bridge  (callTool / callToolRaw by server__tool name)",
    ].join("\n");
  }
  const server = /^mcp\/servers\/([^/]+)$/.exec(specifier)?.[1];
  if (server && catalog.servers().includes(server)) {
    return catalog.entries(server).map((e) => `${e.moduleSpecifier}  ${e.signature}`).join("\n") || `mcp/servers/${server} has no tools.`;
  }
  const found = modules.list(specifier);
  if (found.length > 0) return found.join("\n");
  throw new BadRequestError(`No modules under "${specifier}". Servers: ${catalog.servers().map((s) => `mcp/servers/${s}`).join(", ") || "none"}.`);
}

export function readModule(modules: ModuleTree, specifier: string): string {
  const normalized = normalizeSpecifier(specifier);
  const source = modules.get(normalized);
  if (source === undefined) throw new BadRequestError(`No module "${normalized}". search_tools or list_modules shows module paths.`);
  return source;
}
