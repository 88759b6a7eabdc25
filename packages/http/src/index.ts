/**
 * @codemux/http: codemux over HTTP. Streamable HTTP (and legacy SSE) for many MCP clients, a REST
 * gateway, token auth, Host/Origin checks, health, readiness, Prometheus metrics and config hot reload.
 */
export type { Identity } from "./auth/identity";
export type { OAuthOptions } from "./auth/oauth";
export { DEFAULT_HOST, DEFAULT_PORT, listenFromEnv, parseListen } from "./address";
export { trustedProxyList } from "./connections";
export { BoundedEventStore } from "./event-store";
export type { BoundedEventStoreOptions } from "./event-store";
export { HttpError, TokenConfigError, UnsafeBindError } from "./errors";
export type { HttpErrorCode } from "./errors";
export { stderrSink } from "./log";
export type { LogRecord, LogSink } from "./log";
export { Metrics } from "./metrics";
export { httpCallRecorders, type HttpCallRecorders } from "./recorders";
export type { GaugeCollector, Labels, MetricsReader } from "./metrics";
export type { ScaleOut } from "./scale-out";
export type { HttpServeOptions, PrincipalLimits, ReloadSummary } from "./options";
export { openApiDocument } from "./openapi";
export { CodemuxHttpServer } from "./server";
export { parseHttpSettings } from "./settings";
export type { HttpSettings, PrincipalSettings } from "./settings";
export type { LogFieldsHook } from "./server";
export type { HttpCore } from "./context";
export { TokenSet, parseTokenArg, parseTokenFile } from "./tokens";
export type { UiApprovals, UiJob, UiJobs, UiSources } from "./ui/sources";
export type { TokenMatch, TokenSpec } from "./tokens";
export { watchConfig } from "./watch";
export type { Reloadable, WatchConfigOptions } from "./watch";
