/**
 * @codemux/pool: downstream MCP connections (config, transports, health, restarts, calls).
 * This entry loads no `child_process`: stdio servers load the stdio chunk (`./stdio`, not an entry users import) on first use.
 * @example
 * import { ServerPool, loadConfigFile } from "@codemux/pool";
 * const pool = new ServerPool(await loadConfigFile("codemux.json"));
 * await pool.start();
 */
export { AuthRequiredError } from "./auth/auth-required";
export { loginServer } from "./auth/login";
export type { LoginOptions } from "./auth/login";
export type { LoginCallbackAnswer, LoginCallbacks } from "./auth/login-callbacks";
export { refusalOf, sendLoginPage } from "./auth/login-page";
export { FileOAuthProvider } from "./auth/provider";
export type { FileOAuthProviderOptions } from "./auth/provider";
export { authDirectory, deleteAuthRecord, listAuthRecords, principalAuthDirectory, readAuthRecord } from "./auth/store";
export type { AuthRecord } from "./auth/store";
export type { BackoffOptions } from "./backoff";
export { parseInlineServers } from "./config/inline";
export { interpolate } from "./config/interpolate";
export type { InterpolationContext, InterpolationResult } from "./config/interpolate";
export { parseJsonc } from "./config/jsonc";
export { loadConfigFile, parseConfig, readConfigText } from "./config/load";
export { oauthSettingsOf } from "./config/oauth-settings";
export type { ParseConfigOptions } from "./config/load";
export { SettingsReader, isSettingsObject, type SettingsFail } from "./config/settings-reader";
export type {
  HttpTransportSpec,
  Isolation,
  OAuthSettings,
  PoolConfig,
  PrincipalCredentials,
  ServerSpec,
  StdioTransportSpec,
  TlsSettings,
  ToolFilter,
  TransportSpec,
} from "./config/types";
export type { CallerSession, DownstreamClient, DownstreamNotification, DownstreamRequest } from "./channel";
export type {
  CallOptions,
  ConnectionOptions,
  InstanceOwner,
  RelayContext,
  RememberedEra,
  RetryHints,
  ServerRequestRelay,
  ServerState,
  ServerStatus,
} from "./connection";
export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS } from "./defaults";
export type { RequestId, StreamRequests } from "./stream-requests";
export {
  CallCancelledError,
  CallTimeoutError,
  ConfigError,
  DownstreamError,
  InstanceLimitError,
  NoSessionError,
  PoolError,
  ServerDisconnectedError,
  ServerNotFoundError,
  ServerUnavailableError,
  ToolNotFoundError,
} from "./errors";
export type { PoolErrorCode } from "./errors";
// The server's stdio transport reads messages with it.
export { ServerPool } from "./pool";
export { getDownstreamSkill, listDownstreamSkills, readDownstreamSkill } from "./skills";
export type { DownstreamSkill, DownstreamSkills } from "./skills";
export type { PoolOptions, PoolUpdate } from "./pool";
export { redactConfig } from "./redact";
export { isCodemuxCommand, markSelf, spawnDepth } from "./self";
export { denyReason } from "./tool-filter";
export type { TransportFactory } from "./transports";
export type { TransportContext } from "./config/types";
export { contextFrom, failed, inSpan, traceCarrier, tracer, tracing, TRACER_NAME } from "./tracing";
