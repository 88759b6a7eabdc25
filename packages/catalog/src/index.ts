export { Catalog } from "./catalog";
export type { CatalogDocument, CatalogSearchHit, CatalogSearchOptions } from "./catalog";
export { CatalogError, UnknownToolError } from "./errors";
export type { CatalogErrorCode } from "./errors";
export { ToolSearchIndex } from "./search/index";
export type { SearchDocument, SearchHit, SearchKind, SearchOptions } from "./search/index";
export { signatureOf, summarize } from "./signature";
