export { backoffDelay } from "./backoff";
export type { BackoffOptions } from "./backoff";
export { parseInlineServers } from "./config/inline";
export { interpolate } from "./config/interpolate";
export { loadConfigFile, parseConfig } from "./config/load";
export type { ParseConfigOptions } from "./config/load";
export { SERVER_NAME_PATTERN } from "./config/schema";
export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS } from "./config/types";
export type { HttpTransportSpec, PoolConfig, ServerSpec, StdioTransportSpec, ToolFilter, TransportSpec } from "./config/types";
export { ServerConnection } from "./connection";
export type { CallOptions, ConnectionOptions, ServerState, ServerStatus } from "./connection";
export { childEnvironment, inheritedVariableNames } from "./environment";
export {
  CallCancelledError,
  CallTimeoutError,
  ConfigError,
  DownstreamError,
  PoolError,
  ServerDisconnectedError,
  ServerNotFoundError,
  ServerUnavailableError,
  ToolNotFoundError,
} from "./errors";
export { LineSplitter } from "./line-splitter";
export type { LineSplitterOptions } from "./line-splitter";
export { silentLogger } from "./logger";
export type { Logger } from "./logger";
export { ServerPool } from "./pool";
export type { PoolOptions } from "./pool";
export { StderrRing } from "./stderr-ring";
export { ChildProcessTransport } from "./stdio-transport";
export type { ChildProcessTransportOptions, ExitInfo } from "./stdio-transport";
export { createToolFilter } from "./tool-filter";
export { createTransport, describeTransport } from "./transports";
export type { TransportContext, TransportFactory } from "./transports";
