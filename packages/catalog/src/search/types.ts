/** What a search document describes: tools by default; resources, prompts and saved skills share the index. */
export type SearchKind = "tool" | "resource" | "prompt" | "skill";

/** One tool (or resource, prompt, skill) as the search index sees it. */
export interface SearchDocument {
  /** Unique id across kinds, the fully qualified `server__tool` name for a tool. */
  id: string;
  /** "tool" unless set. */
  kind?: SearchKind;
  server: string;
  name: string;
  title?: string;
  description?: string;
  /** `values`: the values an enum parameter takes ("open", "closed"), which say what the tool can do to its object. */
  parameters: Array<{ name: string; description?: string; values?: readonly string[] }>;
}

export interface SearchOptions {
  /** Most hits to return; 10 unless set. */
  limit?: number;
  /** Only tools of this server. */
  server?: string;
  /** Only documents of these kinds; every kind unless set. */
  kinds?: readonly SearchKind[];
  /** Only documents this says exist for whoever searches (a principal's policy); the others are never scored. */
  visible?: (document: { id: string; server: string; kind: SearchKind }) => boolean;
}

export interface SearchHit {
  id: string;
  kind: SearchKind;
  score: number;
}
