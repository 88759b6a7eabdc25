export type { SearchDocument, SearchHit, SearchKind, SearchOptions } from "./types";
export { ToolSearchIndex } from "./tool-search-index";
