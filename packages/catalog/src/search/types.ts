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
  /** Most hits to return; 10 unless set. */
  limit?: number;
  /** Only tools of this server. */
  server?: string;
}

export interface SearchHit {
  id: string;
  score: number;
}
