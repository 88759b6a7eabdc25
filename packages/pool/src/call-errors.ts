import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { AuthRequiredError, isAuthFailure } from "./auth/auth-required";
import { CallCancelledError, CallTimeoutError, DownstreamError, PoolError, ServerDisconnectedError, ServerUnavailableError } from "./errors";
import { describeHttpError, describeNetworkFailure, httpStatusOf, isTlsCode, networkCause } from "./http-errors";

/** What the connection knows about a failed call when it translates the failure. */
export interface FailedCall {
  server: string;
  tool: string;
  timeoutMs: number;
  /** The caller's signal aborted. */
  cancelled: boolean;
  /** The server is still ready: a failure otherwise unexplained is not a dropped connection. */
  ready: boolean;
  /** The server's URL; empty for stdio. */
  url: string;
  /** Why the connection closed, in words (exit code, stderr). */
  closedBecause: () => string;
}

const NOT_SENT_CODES = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "PROXY_CONNECT_FAILED", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH", "ENETUNREACH"];

/** True for the SDK's (and the lane's) error for a connection that closed. */
export function isConnectionClosed(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed;
}

/**
 * Whether a failed connect shows its era verdict wrong: with none, the probe ended by the server closing (rmcp-style servers exit on
 * it); a remembered 2025 one refused with -32022; a remembered 2026 one whose first request got a 2025-shaped answer or an error.
 */
export function isStaleVerdict(error: unknown, prior: "legacy" | "modern" | undefined): boolean {
  if (prior === undefined) return error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed;
  if (prior === "legacy") return error instanceof ProtocolError && error.code === ProtocolErrorCode.UnsupportedProtocolVersion;
  return (error instanceof SdkError && error.code === SdkErrorCode.InvalidResult) || error instanceof ProtocolError;
}

/**
 * Every failure a channel raises (the SDK's SdkError, ProtocolError and transport errors, the lane's, our own) as the
 * PoolError a caller sees; `data.sent` says whether the request may have reached the server,
 * `data.transient` whether trying again may help. A failure only a login fixes is an `AuthRequiredError`.
 */
export function callError(error: unknown, call: FailedCall): PoolError {
  const { server, tool } = call;
  if (call.cancelled) return new CallCancelledError(server, tool, { cause: error });
  if (isAuthFailure(error))
    return AuthRequiredError.isInstance(error) ? error : new AuthRequiredError(server, "the server refused the stored login", { cause: error });
  if (PoolError.isInstance(error)) {
    if (error.code === "NOT_CONNECTED")
      return new ServerUnavailableError(server, "the server process is not running; it is restarted on the next call", {
        cause: error,
        data: { sent: false, transient: true },
      });
    return error;
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return new CallTimeoutError(server, tool, call.timeoutMs, { cause: error });
    if (error.code === SdkErrorCode.ConnectionClosed)
      return new ServerDisconnectedError(server, call.closedBecause(), { cause: error, data: { sent: true, transient: true } });
  }
  if (error instanceof ProtocolError) return new DownstreamError(server, tool, error.message, error.code, { cause: error });
  const network = networkCause(error);
  if (network) {
    const notSent = NOT_SENT_CODES.includes(network.code ?? "") || isTlsCode(network.code);
    return new ServerUnavailableError(server, `${describeNetworkFailure(error, call.url)}; it is tried again on the next call`, {
      cause: error,
      data: { sent: !notSent, transient: !isTlsCode(network.code) },
    });
  }
  const status = httpStatusOf(error);
  if (status !== undefined) {
    const data = { httpStatus: status, sent: !(status === 502 || status === 503 || status === 429), transient: [429, 502, 503, 504].includes(status) };
    return new DownstreamError(server, tool, describeHttpError(error, call.url) ?? `HTTP ${status}`, undefined, { cause: error, data });
  }
  if (!call.ready) return new ServerDisconnectedError(server, call.closedBecause(), { cause: error, data: { sent: true, transient: true } });
  return new DownstreamError(server, tool, error instanceof Error ? error.message : String(error), undefined, { cause: error });
}
