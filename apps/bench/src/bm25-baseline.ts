import MiniSearch from "minisearch";
import type { SearchDocument } from "@codemux/catalog";

/**
 * The reference ranking the search is judged against: MiniSearch with its default
 * options over tool name and description, nothing else (benchmarks/README.md).
 */
export function bm25Baseline(docs: readonly SearchDocument[]): (query: string, limit: number) => string[] {
  const index = new MiniSearch<{ id: string; name: string; description: string }>({ fields: ["name", "description"] });
  index.addAll(docs.map((d) => ({ id: d.id, name: d.name, description: d.description ?? "" })));
  return (query, limit) =>
    index
      .search(query)
      .slice(0, limit)
      .map((r) => String(r.id));
}
