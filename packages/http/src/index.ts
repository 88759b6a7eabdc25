/**
 * @codemux/http: codemux over HTTP. Streamable HTTP (and legacy SSE) for many MCP clients, a REST
 * gateway, token auth, Host/Origin checks, health, readiness, Prometheus metrics and config hot reload.
 */
export type { OAuthOptions } from "./auth/oauth";
export { listenFromEnv, parseListen } from "./address";
export { trustedProxyList } from "./connections";
export { HttpError, TokenConfigError, UnsafeBindError } from "./errors";
export type { HttpErrorCode } from "./errors";
export { stderrSink } from "./log";
export type { LogRecord, LogSink } from "./log";
export { httpCallRecorders, type HttpCallRecorders } from "./recorders";
export type { GaugeCollector, Labels, Metrics, MetricsReader } from "./metrics";
export type { ScaleOut } from "./scale-out";
export type { HttpServeOptions, PrincipalLimits, ReloadSummary } from "./options";
export { CodemuxHttpServer } from "./server";
export { parseHttpSettings } from "./settings";
export type { HttpSettings, PrincipalSettings } from "./settings";
export type { LogFieldsHook } from "./server";
export type { HttpCore } from "./context";
export { parseTokenArg, parseTokenFile } from "./tokens";
export type { UiApprovals, UiJob, UiJobs, UiSources } from "./ui/sources";
export type { TokenSpec } from "./tokens";
export { watchConfig } from "./watch";
export type { Reloadable, WatchConfigOptions } from "./watch";
