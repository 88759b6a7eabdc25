import { SERVERS_PREFIX, closestNames, serverModuleSpecifier } from "@codemux/core";
import type { ModuleTree, ToolVisibility } from "@codemux/codegen";
import type { CatalogView } from "../policy/catalog-view";

/** Longer paths get no suggestions: comparing spellings costs time in proportion to their length. */
const MAX_SUGGESTED_CHARS = 200;

/**
 * The module path spelled closest to one that does not exist (none when nothing is close): among the
 * named server's modules (the server spelled closest when none goes by that name), else among the
 * server modules. The candidates are one server's modules or the server list, whatever the catalog's size.
 */
export function similarModules(
  specifier: string,
  { catalog, tree, visible }: { catalog: Pick<CatalogView, "servers">; tree: ModuleTree; visible?: ToolVisibility | undefined },
): string[] {
  if (specifier.length > MAX_SUGGESTED_CHARS) return [];
  const servers = catalog.servers();
  const named = specifier.startsWith(SERVERS_PREFIX) ? specifier.slice(SERVERS_PREFIX.length).split("/")[0] : undefined;
  const server = named === undefined || servers.includes(named) ? named : closestNames(named, servers, 1)[0];
  if (named === undefined || server === undefined) return closestNames(specifier, servers.map(serverModuleSpecifier), 1);
  const respelled = `${serverModuleSpecifier(server)}${specifier.slice(SERVERS_PREFIX.length + named.length)}`;
  return closestNames(respelled, tree.list(serverModuleSpecifier(server), visible), 1);
}
