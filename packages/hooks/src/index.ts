export { PluginChain, SHORT_CIRCUIT_META } from "./chain";
export type { ChainOptions } from "./chain";
export { loadPlugins } from "./config";
export type { LoadPluginsOptions, LoadedPlugins } from "./config";
export type { PluginChanges, PreparedPlugins } from "./plugin-set";
export { CannotWrapError, HooksError, PinFileError, PluginConfigError, PluginFailedError, PluginRefusedError, RateLimitedError } from "./errors";
export type { HooksErrorCode } from "./errors";
export { PluginHost } from "./host";
export type { PluginHostOptions } from "./host";
export { pluginMiddleware } from "./middleware";
export type { PluginMiddleware } from "./middleware";
export { approvePins, listPending, pinApprovals } from "./pin-approvals";
export { readPinFile } from "./pin-store";
export { filePinBook, sharedPinBook, type PinBook, type PinChange } from "./pin-book";
export type { ApproveResult } from "./pin-approvals";
export type { PendingPin, PinFile, PinRecord } from "./pin-store";
export { auditPlugin } from "./plugins/audit";
export type { AuditLine, AuditOptions } from "./plugins/audit";
export { CACHE_META, cachePlugin } from "./plugins/cache";
export type { CacheOptions } from "./plugins/cache";
export { guardPlugin } from "./plugins/guard";
export type { GuardOptions } from "./plugins/guard";
export { pinFileOfConfig, pinPlugin } from "./plugins/pin";
export type { HeldItemKind, PinOptions, PinScreen, SeenItem, SeenTool, Withheld } from "./plugins/pin";
export { rateLimitPlugin } from "./plugins/rate-limit";
export type { RateLimitDimension, RateLimitOptions, RateLimitRule } from "./plugins/rate-limit";
export { REDACTED_META, redactPlugin, redactResult } from "./plugins/redact";
export type { RedactOptions } from "./plugins/redact";
export { SUMMARIZED_META, summarizePlugin } from "./plugins/summarize";
export type { SummarizeOptions } from "./plugins/summarize";
export { memoryPlugin } from "./plugins/memory";
export type { Memory, MemoryPlugin, MemoryPluginOptions } from "./plugins/memory";
export { Redactor } from "./redactor";
export type { RecordRedactor, RedactorOptions } from "./redactor";
export type {
  BeforeCallResult,
  CallRecord,
  CallSession,
  Observability,
  Plugin,
  PluginCall,
  PluginInitContext,
  PluginMetrics,
  ResultKeeper,
  ToolHints,
  ToolInfo,
} from "./types";
export { wrapWithProxy } from "./wrap";
export type { WrapOptions, WrappableMcpServer, WrappableServer } from "./wrap";
