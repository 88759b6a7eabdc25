/** Base of every error @codemux/pool raises; `code` is stable for callers to branch on. */
export class PoolError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A configuration problem; the message names the file, the entry and the field. */
export class ConfigError extends PoolError {
  readonly file: string | undefined;
  constructor(message: string, options: { file?: string; cause?: unknown } = {}) {
    super("CONFIG_INVALID", message, options);
    this.file = options.file;
  }
}

export class ServerNotFoundError extends PoolError {
  constructor(readonly server: string, known: string[]) {
    super("SERVER_NOT_FOUND", `No server named "${server}"${known.length ? ` (servers: ${known.join(", ")})` : " (no servers are configured)"}.`);
  }
}

/** The server is not connected and could not be (re)connected in time. */
export class ServerUnavailableError extends PoolError {
  constructor(readonly server: string, reason: string, options?: { cause?: unknown }) {
    super("SERVER_UNAVAILABLE", `Server "${server}" is unavailable: ${reason}`, options);
  }
}

/** The connection closed (the process exited, the stream dropped) while a call was in flight. */
export class ServerDisconnectedError extends PoolError {
  constructor(readonly server: string, reason: string, options?: { cause?: unknown }) {
    super("SERVER_DISCONNECTED", `Server "${server}" disconnected during the call: ${reason}`, options);
  }
}

export class CallTimeoutError extends PoolError {
  constructor(readonly server: string, readonly tool: string, readonly timeoutMs: number, options?: { cause?: unknown }) {
    super("CALL_TIMEOUT", `Call to ${server}__${tool} timed out after ${timeoutMs} ms without an answer or progress.`, options);
  }
}

export class CallCancelledError extends PoolError {
  constructor(readonly server: string, readonly tool: string, options?: { cause?: unknown }) {
    super("CALL_CANCELLED", `Call to ${server}__${tool} was cancelled.`, options);
  }
}

export class ToolNotFoundError extends PoolError {
  constructor(readonly server: string, readonly tool: string, reason = "it has no such tool") {
    super("TOOL_NOT_FOUND", `Server "${server}" cannot call "${tool}": ${reason}.`);
  }
}

/** The downstream answered the call with a JSON-RPC error. */
export class DownstreamError extends PoolError {
  constructor(readonly server: string, readonly tool: string, message: string, readonly rpcCode?: number, options?: { cause?: unknown }) {
    super("DOWNSTREAM_ERROR", `${server}__${tool} failed: ${message}`, options);
  }
}
