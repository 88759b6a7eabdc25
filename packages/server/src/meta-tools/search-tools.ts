import { defineMetaTool, textResult, type CatalogEntry } from "@codemux/core";
import type { CatalogDocument } from "@codemux/catalog";
import { MAX_QUERY_CHARS } from "../defaults";
import { hitKind, searchCatalog, type SearchAnswer, type SearchDetail, type SearchRequest } from "../search";
import type { CodemuxServices } from "../services";

// These descriptions are the whole upfront cost of codemux in the model's context: every word earns its place.
export const searchTools = defineMetaTool<Required<Omit<SearchRequest, "server">> & { server?: string }, CodemuxServices>({
  name: "search_tools",
  description: 'Find tools for a task in a few words ("create github issue").',
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", maxLength: MAX_QUERY_CHARS },
      limit: { type: "integer", minimum: 1, maximum: 50, default: 10 },
      server: { type: "string" },
      detail: { type: "string", enum: ["name", "summary", "full"], default: "summary" },
    },
    required: ["query"],
  },
  annotations: { readOnlyHint: true },
  run: async (input, { services, session }) => textResult(searchText(await searchCatalog(services, input, session), input.detail, services.hints.browse)),
});

/** A search as the model reads it: the hits as compact lines, or what to try when there are none, then notes on servers still connecting. */
export function searchText(answer: SearchAnswer, detail: SearchDetail, browse: string): string {
  const lines = answer.hits.length
    ? formatHits(
        answer.hits.map((hit) => hit.entry),
        detail,
      )
    : [`No tools match "${answer.query}". Try other words, or ${browse} ${answer.tools} tools of ${answer.servers} servers.`];
  return [...lines, ...answer.pending].join("\n");
}

/** Ranked hits as compact lines: `server__tool  module`, then the signature and, with summary, a short description. */
export function formatHits(entries: ReadonlyArray<CatalogEntry | CatalogDocument>, detail: SearchDetail): string[] {
  return entries.flatMap((entry) => {
    const kind = hitKind(entry);
    const lines = [`${entry.qualifiedName}  ${entry.moduleSpecifier}${kind ? `  (${kind})` : ""}`, `  ${entry.signature}`];
    if (detail !== "name" && entry.summary) lines.push(`  ${entry.summary}`);
    if (detail === "full") lines.push(`  input schema: ${JSON.stringify(entry.tool.inputSchema)}`);
    return lines;
  });
}
