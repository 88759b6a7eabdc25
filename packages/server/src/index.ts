export { CatalogCache } from "./catalog-cache";
export { resolveConfig } from "./config";
export type { ResolveConfigOptions } from "./config";
export { Codemux } from "./core";
export type { CodemuxOptions, ExecuteOptions, Mode } from "./core";
export { BadRequestError, CodemuxError, InvalidArgumentsError, ResultNotFoundError } from "./errors";
export { ToolInvoker } from "./invoker";
export {
  META_TOOLS,
  callToolDefinition,
  executeCodeDefinition,
  listModulesDefinition,
  readModuleDefinition,
  readResultDefinition,
  searchToolsDefinition,
} from "./meta-tools/definitions";
export { normalizeSpecifier } from "./meta-tools/modules";
export type { SearchDetail, SearchRequest } from "./meta-tools/search";
export { ResultStore, estimateTokens } from "./results";
export type { KeptResult, ResultStoreOptions } from "./results";
export { createSessionServer, errorResult, executionResult } from "./session";
export { serveStdio } from "./stdio";
export { StdioServerTransport } from "./stdio-transport";
export type { StdioServerTransportOptions } from "./stdio-transport";
export { ArgumentValidator } from "./validation";
export { VERSION } from "./version";
