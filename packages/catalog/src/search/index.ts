/** One tool as the search index sees it. */
export interface SearchDocument {
  /** Unique id, the fully qualified `server__tool` name. */
  id: string;
  server: string;
  name: string;
  title?: string;
  description?: string;
  parameters: Array<{ name: string; description?: string }>;
}

export interface SearchOptions {
  limit?: number;
  /** Only tools of this server. */
  server?: string;
}

export interface SearchHit {
  id: string;
  score: number;
}

/** Placeholder ranking (word overlap); replaced by the real index of the search issue. */
export class ToolSearchIndex {
  readonly #docs = new Map<string, { doc: SearchDocument; words: Set<string> }>();

  get size(): number {
    return this.#docs.size;
  }

  add(doc: SearchDocument): void {
    const text = [doc.server, doc.name, doc.title, doc.description, ...doc.parameters.map((p) => p.name)].join(" ");
    this.#docs.set(doc.id, { doc, words: new Set(words(text)) });
  }

  remove(id: string): void {
    this.#docs.delete(id);
  }

  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const q = words(query);
    const hits: SearchHit[] = [];
    for (const { doc, words: w } of this.#docs.values()) {
      if (options.server && doc.server !== options.server) continue;
      const score = q.filter((t) => w.has(t)).length;
      if (score > 0) hits.push({ id: doc.id, score });
    }
    return hits.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id)).slice(0, options.limit ?? 10);
  }
}

function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}
