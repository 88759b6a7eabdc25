import { CodemuxError } from "@codemux/core";

export type HttpErrorCode =
  | "BAD_REQUEST"
  | "INVALID_JSON"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "INVALID_HOST"
  | "INVALID_ORIGIN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "TOO_LARGE"
  | "CAPACITY"
  | "QUOTA"
  | "INVALID_ARGUMENTS"
  | "UNKNOWN_TOOL"
  | "SERVER_UNAVAILABLE"
  | "TIMEOUT"
  | "DOWNSTREAM_ERROR"
  | "TOOL_ERROR"
  | "EXEC_ERROR"
  | "BUSY"
  | "CANCELLED"
  | "NOT_IMPLEMENTED"
  | "INTERNAL"
  | "UNSAFE_BIND"
  | "INVALID_TOKENS"
  | "AUTH_UNAVAILABLE";

/** The status each code answers with. */
export const HTTP_STATUS: Record<HttpErrorCode, number> = {
  BAD_REQUEST: 400,
  INVALID_JSON: 400,
  INVALID_ARGUMENTS: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  INVALID_HOST: 403,
  INVALID_ORIGIN: 403,
  NOT_FOUND: 404,
  UNKNOWN_TOOL: 404,
  METHOD_NOT_ALLOWED: 405,
  TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOOL_ERROR: 422,
  EXEC_ERROR: 422,
  BUSY: 429,
  QUOTA: 429,
  // nginx's "client closed request": the caller went away, so only the log sees it.
  CANCELLED: 499,
  INTERNAL: 500,
  UNSAFE_BIND: 500,
  INVALID_TOKENS: 500,
  NOT_IMPLEMENTED: 501,
  DOWNSTREAM_ERROR: 502,
  CAPACITY: 503,
  SERVER_UNAVAILABLE: 503,
  AUTH_UNAVAILABLE: 503,
  TIMEOUT: 504,
};

/** Base of every error @codemux/http raises; `code` is stable, `status` is the HTTP status it answers with, and REST answers `code` in lower case (`not_found`). */
export class HttpError extends CodemuxError<HttpErrorCode> {
  static override readonly package = "http";
  readonly status: number;
  /** Extra response headers (Allow, Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string>;
  /** The JSON-RPC code an MCP route answers it with, when not the one its `code` implies (respond.ts `rpcCodeOf`). */
  readonly rpcCode: number | undefined;

  constructor(
    code: HttpErrorCode,
    message: string,
    options: { status?: number; cause?: unknown; data?: Record<string, unknown>; headers?: Record<string, string>; rpcCode?: number } = {},
  ) {
    super(code, message, options);
    this.status = options.status ?? HTTP_STATUS[code];
    this.headers = options.headers ?? {};
    this.rpcCode = options.rpcCode;
  }
}

/** Serving on a non-loopback address without any token: refused unless `insecureNoAuth`. */
export class UnsafeBindError extends HttpError {
  constructor(address: string) {
    super(
      "UNSAFE_BIND",
      `Refusing to serve ${address} without a token: anyone who can reach it could run tools. Set --token, --token-file or CODEMUX_TOKEN, bind 127.0.0.1, or pass --insecure-no-auth if a proxy in front authenticates.`,
    );
  }
}

/** A token list that cannot be used (a bad file, an empty or duplicate token). */
export class TokenConfigError extends HttpError {
  constructor(message: string) {
    super("INVALID_TOKENS", message);
  }
}

/** Why a new MCP session was refused: every slot is taken, or the principal holds its share. */
export type SessionRefusal =
  | { limit: "sessions"; max: number }
  /** `held`: what it holds, more than `max` when it took free places while no one else waited. */
  | { limit: "sessionsPerPrincipal"; max: number; principal: string; held?: number };

/** A 2026-07-28 `subscriptions/listen` refused: the principal holds as many open listen streams as it may hold sessions (429 `quota`). */
export class ListenLimitError extends HttpError {
  constructor(principal: string, max: number) {
    super(
      "QUOTA",
      `Principal "${principal}" already holds ${max} open listen streams, its limit (sessions per principal: ${max}); end one of its subscriptions/listen requests or raise http.limits.perPrincipal.sessions in the config.`,
      { headers: { "retry-after": "5" }, data: { limit: "sessionsPerPrincipal", max } },
    );
  }
}

/** A new MCP session refused at a limit: all the sessions (503 `capacity`) or one principal's share (429 `quota`). */
export class SessionLimitError extends HttpError {
  readonly refusal: SessionRefusal;

  constructor(refusal: SessionRefusal) {
    super(
      refusal.limit === "sessions" ? "CAPACITY" : "QUOTA",
      refusal.limit === "sessions"
        ? `Capacity: ${refusal.max} MCP sessions are open (the limit is ${refusal.max}); try again shortly or close idle clients.`
        : `Principal "${refusal.principal}" already holds ${refusal.held ?? refusal.max} MCP sessions, its limit (sessions per principal: ${refusal.max}); close one of its idle clients (DELETE /mcp ends a session) or raise http.limits.perPrincipal.sessions in the config.`,
      { headers: { "retry-after": "5" }, data: { limit: refusal.limit, max: refusal.max } },
    );
    this.refusal = refusal;
  }
}

/** Something new (a session, a stream) refused while this instance drains before it exits (503 `capacity`). */
export class DrainingError extends HttpError {
  constructor(what: string) {
    super(
      "CAPACITY",
      `This codemux instance is draining before it stops and takes no ${what}; retry in a few seconds, when the load balancer sends you to another instance.`,
      {
        headers: { "retry-after": "5" },
        data: { draining: true },
      },
    );
  }
}

/** A token refused unchecked (429 `quota`): its client address presented too many failed tokens (see `FailureLimit`). */
export class HeldBackError extends HttpError {
  constructor(address: string, waitS: number) {
    super("QUOTA", `Too many failed tokens from ${address}: wait ${waitS} s, then retry with a current token.`, {
      headers: { "retry-after": String(waitS), connection: "close" },
      data: { limit: "failedTokensPerAddress" },
    });
  }
}
