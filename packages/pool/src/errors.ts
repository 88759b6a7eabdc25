import { CodemuxError, redactSecrets } from "@codemux/core";

export type PoolErrorCode =
  | "CONFIG_INVALID"
  | "SERVER_NOT_FOUND"
  | "SERVER_UNAVAILABLE"
  | "SERVER_DISCONNECTED"
  | "CALL_TIMEOUT"
  | "CALL_CANCELLED"
  | "TOOL_NOT_FOUND"
  | "DOWNSTREAM_ERROR"
  | "CONNECT_TIMEOUT"
  | "COMMAND_NOT_FOUND"
  | "SPAWN_FAILED"
  | "NOT_CONNECTED"
  | "MESSAGE_TOO_LARGE"
  | "INSTANCE_LIMIT"
  | "SUBSCRIPTION_LIMIT"
  | "NO_SESSION";

interface PoolErrorOptions {
  cause?: unknown;
  data?: Record<string, unknown>;
}

/** Base of every error @codemux/pool raises; `code` is stable for callers to branch on. Messages never hold URL secrets. */
export class PoolError extends CodemuxError<PoolErrorCode> {
  static override readonly package = "pool";

  constructor(code: PoolErrorCode, message: string, options: PoolErrorOptions = {}) {
    super(code, redactSecrets(message), options);
  }
}

/** A configuration problem; the message names the file, the entry and the field. */
export class ConfigError extends PoolError {
  readonly file: string | undefined;
  constructor(message: string, options: { file?: string; cause?: unknown } = {}) {
    super("CONFIG_INVALID", message, { cause: options.cause, data: options.file === undefined ? undefined : { file: options.file } });
    this.file = options.file;
  }

  static override readonly forCode = "CONFIG_INVALID";
}

export class ServerNotFoundError extends PoolError {
  constructor(
    readonly server: string,
    known: string[],
  ) {
    super("SERVER_NOT_FOUND", `No server named "${server}"${known.length ? ` (servers: ${known.join(", ")})` : " (no servers are configured)"}.`, {
      data: { server, known },
    });
  }

  static override readonly forCode = "SERVER_NOT_FOUND";
}

/** The server is not connected and could not be (re)connected in time. */
export class ServerUnavailableError extends PoolError {
  constructor(
    readonly server: string,
    reason: string,
    options: PoolErrorOptions = {},
  ) {
    super("SERVER_UNAVAILABLE", `Server "${server}" is unavailable: ${reason}`, { ...options, data: { server, ...options.data } });
  }

  static override readonly forCode = "SERVER_UNAVAILABLE";
}

/** The connection closed (the process exited, the stream dropped) while a call was in flight. */
export class ServerDisconnectedError extends PoolError {
  constructor(
    readonly server: string,
    reason: string,
    options: PoolErrorOptions = {},
  ) {
    super("SERVER_DISCONNECTED", `Server "${server}" disconnected during the call: ${reason}`, { ...options, data: { server, ...options.data } });
  }

  static override readonly forCode = "SERVER_DISCONNECTED";
}

export class CallTimeoutError extends PoolError {
  constructor(
    readonly server: string,
    readonly tool: string,
    readonly timeoutMs: number,
    options: PoolErrorOptions = {},
  ) {
    super("CALL_TIMEOUT", `Call to ${server}__${tool} timed out after ${timeoutMs} ms without an answer or progress.`, {
      ...options,
      data: { server, tool, timeoutMs, ...options.data },
    });
  }

  static override readonly forCode = "CALL_TIMEOUT";
}

export class CallCancelledError extends PoolError {
  constructor(
    readonly server: string,
    readonly tool: string,
    options: PoolErrorOptions = {},
  ) {
    super("CALL_CANCELLED", `Call to ${server}__${tool} was cancelled.`, { ...options, data: { server, tool, ...options.data } });
  }

  static override readonly forCode = "CALL_CANCELLED";
}

/** The tool does not exist on the server, or the config hides it (`data.denied` is true then). */
export class ToolNotFoundError extends PoolError {
  constructor(
    readonly server: string,
    readonly tool: string,
    reason = "it has no such tool",
    options: { denied?: boolean } = {},
  ) {
    super("TOOL_NOT_FOUND", `Server "${server}" cannot call "${tool}": ${reason}.`, { data: { server, tool, denied: options.denied ?? false } });
  }

  static override readonly forCode = "TOOL_NOT_FOUND";
}

/** The downstream answered the call with a JSON-RPC error (or an HTTP error). */
export class DownstreamError extends PoolError {
  constructor(
    readonly server: string,
    readonly tool: string,
    message: string,
    readonly rpcCode?: number,
    options: PoolErrorOptions = {},
  ) {
    super("DOWNSTREAM_ERROR", `${server}__${tool} failed: ${message}`, {
      ...options,
      data: { server, tool, ...(rpcCode === undefined ? {} : { rpcCode }), ...options.data },
    });
  }

  static override readonly forCode = "DOWNSTREAM_ERROR";
}

/**
 * An isolated server already runs its `maxInstances` instances, all owned by others, or (per session) the calling
 * principal's sessions already hold its share of them (`principal` and `share` set): a new owner waits until one stops.
 */
export class InstanceLimitError extends PoolError {
  constructor(
    readonly server: string,
    readonly limit: number,
    what: { per: "principal" | "session"; idleStopMs: number; principal?: string; share?: number },
  ) {
    const held =
      what.principal === undefined
        ? `all ${limit} it may run (its "maxInstances") are in use by others`
        : `${what.principal} already holds ${what.share} of them, the most one principal may of its "maxInstances" of ${limit}`;
    super(
      "INSTANCE_LIMIT",
      `Server "${server}" runs one instance per ${what.per} and ${held}; ` +
        `try again once one has been unused for ${Math.round(what.idleStopMs / 1000)} s (it is then stopped)${what.principal === undefined ? "" : " or its session ended"}, or raise "maxInstances" in its entry.`,
      { data: { server, limit, sent: false, transient: false, ...(what.principal === undefined ? {} : { principal: what.principal, share: what.share }) } },
    );
  }

  static override readonly forCode = "INSTANCE_LIMIT";
}

/** A call to an isolated server that names no client session, so no instance can be picked for it. */
export class NoSessionError extends PoolError {
  constructor(readonly server: string) {
    super("NO_SESSION", `Server "${server}" runs one instance per principal or session, and this call names no session; call it through codemux's pipeline.`, {
      data: { server, sent: false, transient: false },
    });
  }

  static override readonly forCode = "NO_SESSION";
}
