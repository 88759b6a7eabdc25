import type { Catalog, CatalogEntry } from "@codemux/catalog";
import { BadRequestError } from "../errors";

export type SearchDetail = "name" | "summary" | "full";

export interface SearchRequest {
  query: string;
  limit?: number;
  server?: string;
  detail?: SearchDetail;
}

/** Ranked hits as compact lines: `server__tool  module`, then the signature and, with summary, a short description. */
export function formatSearch(catalog: Catalog, request: SearchRequest, notes: string[] = []): string {
  const query = request.query.trim();
  if (!query) throw new BadRequestError('"query" must not be empty: describe what you want to do in a few words.');
  if (request.server !== undefined && !catalog.servers().includes(request.server)) {
    throw new BadRequestError(`No server named "${request.server}". Servers: ${catalog.servers().join(", ") || "none"}.`);
  }
  const hits = catalog.search(query, { limit: request.limit ?? 10, ...(request.server ? { server: request.server } : {}) });
  const lines: string[] = [];
  if (hits.length === 0) {
    lines.push(`No tools match "${query}". Try other words, or list_modules to browse ${catalog.size} tools of ${catalog.servers().length} servers.`);
  }
  for (const { entry } of hits) lines.push(...formatHit(entry, request.detail ?? "summary"));
  return [...lines, ...notes].join("\n");
}

function formatHit(entry: CatalogEntry, detail: SearchDetail): string[] {
  const lines = [`${entry.qualifiedName}  ${entry.moduleSpecifier}`, `  ${entry.signature}`];
  if (detail !== "name" && entry.summary) lines.push(`  ${entry.summary}`);
  if (detail === "full") lines.push(`  input schema: ${JSON.stringify(entry.tool.inputSchema)}`);
  return lines;
}
