export { Catalog } from "./catalog";
export type { CatalogSearchHit } from "./catalog";
export { CatalogError, UnknownToolError } from "./errors";
export { MAX_TOOL_NAME_LENGTH, SEPARATOR, qualifiedToolName, splitWords, toFunctionName, uniqueFunctionNames } from "./names";
export { ToolSearchIndex } from "./search/index";
export type { SearchDocument, SearchHit, SearchOptions } from "./search/index";
export { signatureOf, summarize } from "./signature";
export type { CatalogEntry, ToolDefinition } from "./tool";
