export { Catalog } from "./catalog";
export type { CatalogDocument, CatalogSearchHit, CatalogSearchOptions } from "./catalog";
export { CatalogError, ERROR_BRAND, UnknownToolError } from "./errors";
export type { CatalogErrorCode } from "./errors";
export {
  BRIDGE_SPECIFIER,
  MAX_TOOL_NAME_LENGTH,
  MODULE_ROOT,
  SEPARATOR,
  SERVERS_PREFIX,
  SERVER_MODULE_NAMES,
  SERVER_NAME_PATTERN,
  isReservedWord,
  qualifiedToolName,
  serverModuleSpecifier,
  splitQualifiedName,
  splitWords,
  toFunctionName,
  toolModuleSpecifier,
  uniqueFunctionNames,
} from "./names";
export { ToolSearchIndex } from "./search/index";
export type { SearchDocument, SearchHit, SearchKind, SearchOptions } from "./search/index";
export { signatureOf, summarize } from "./signature";
export { closestNames } from "./suggest";
export type { CatalogEntry, ToolAnnotations, ToolDefinition } from "./tool";
