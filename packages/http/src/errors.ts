/** Marks every codemux error, whichever package and installed copy made it; the value names the package. */
export const ERROR_BRAND: unique symbol = Symbol.for("codemux.error");

export type HttpErrorCode =
  | "bad_request"
  | "invalid_json"
  | "unauthorized"
  | "forbidden"
  | "invalid_host"
  | "invalid_origin"
  | "not_found"
  | "method_not_allowed"
  | "unsupported_media_type"
  | "too_large"
  | "capacity"
  | "quota"
  | "invalid_arguments"
  | "unknown_tool"
  | "server_unavailable"
  | "timeout"
  | "downstream_error"
  | "tool_error"
  | "exec_error"
  | "busy"
  | "cancelled"
  | "not_implemented"
  | "internal"
  | "unsafe_bind"
  | "invalid_tokens";

/** The status each code answers with. */
export const HTTP_STATUS: Record<HttpErrorCode, number> = {
  bad_request: 400,
  invalid_json: 400,
  invalid_arguments: 400,
  unauthorized: 401,
  forbidden: 403,
  invalid_host: 403,
  invalid_origin: 403,
  not_found: 404,
  unknown_tool: 404,
  method_not_allowed: 405,
  too_large: 413,
  unsupported_media_type: 415,
  tool_error: 422,
  exec_error: 422,
  busy: 429,
  quota: 429,
  // nginx's "client closed request": the caller went away, so only the log sees it.
  cancelled: 499,
  internal: 500,
  unsafe_bind: 500,
  invalid_tokens: 500,
  not_implemented: 501,
  downstream_error: 502,
  capacity: 503,
  server_unavailable: 503,
  timeout: 504,
};

/** Base of every error @codemux/http raises; `code` is stable, `status` is the HTTP status it answers with. */
export class HttpError extends Error {
  readonly [ERROR_BRAND] = "http";
  readonly code: HttpErrorCode;
  readonly status: number;
  readonly data: Record<string, unknown> | undefined;
  /** Extra response headers (Allow, Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(
    code: HttpErrorCode,
    message: string,
    options: { status?: number; cause?: unknown; data?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = options.status ?? HTTP_STATUS[code];
    this.data = options.data;
    this.headers = options.headers ?? {};
  }

  /** True for an error of this package from any installed copy of it. */
  static isInstance(value: unknown): value is HttpError {
    return typeof value === "object" && value !== null && (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] === "http";
  }
}

/** Serving on a non-loopback address without any token: refused unless `insecureNoAuth`. */
export class UnsafeBindError extends HttpError {
  constructor(address: string) {
    super(
      "unsafe_bind",
      `Refusing to serve ${address} without a token: anyone who can reach it could run tools. Set --token, --token-file or CODEMUX_TOKEN, bind 127.0.0.1, or pass --insecure-no-auth if a proxy in front authenticates.`,
    );
  }
}

/** A token list that cannot be used (a bad file, an empty or duplicate token). */
export class TokenConfigError extends HttpError {
  constructor(message: string) {
    super("invalid_tokens", message);
  }
}

/** Why a new MCP session was refused: every slot is taken, or the principal holds its share. */
export type SessionRefusal = { limit: "sessions"; max: number } | { limit: "sessionsPerPrincipal"; max: number; principal: string };

/** A new MCP session refused at a limit: all the sessions (503 `capacity`) or one principal's share (429 `quota`). */
export class SessionLimitError extends HttpError {
  readonly refusal: SessionRefusal;

  constructor(refusal: SessionRefusal) {
    super(
      refusal.limit === "sessions" ? "capacity" : "quota",
      refusal.limit === "sessions"
        ? `Capacity: ${refusal.max} MCP sessions are open (the limit is ${refusal.max}); try again shortly or close idle clients.`
        : `Principal "${refusal.principal}" already holds ${refusal.max} MCP sessions, its limit (sessions per principal: ${refusal.max}); close one of its idle clients (DELETE /mcp ends a session) or raise http.limits.perPrincipal.sessions in the config.`,
      { headers: { "retry-after": "5" }, data: { limit: refusal.limit, max: refusal.max } },
    );
    this.refusal = refusal;
  }
}
