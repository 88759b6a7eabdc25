export type { SearchDocument, SearchHit, SearchOptions } from "./types";
export { ToolSearchIndex } from "./tool-search-index";
