import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { AuthRequiredError, isAuthFailure, needsLoginReason } from "./auth/auth-required";
import { isConnectionClosed } from "./call-errors";
import type { ServerSpec } from "./config/types";
import { PoolError } from "./errors";
import { describeHttpError, describeNetworkFailure, httpStatusOf, isTlsCode, networkCause } from "./http-errors";
import type { StderrRing } from "./stderr-ring";

/** How a failed start is told: the exit, the stderr tail, the config's warnings. */

export function exitOf(transport: unknown): { code: number | null; signal: NodeJS.Signals | null } | undefined {
  return typeof transport === "object" && transport !== null && "exit" in transport
    ? (transport as { exit?: { code: number | null; signal: NodeJS.Signals | null } }).exit
    : undefined;
}

export function withTail(message: string, tail: string[]): string {
  return tail.length ? `${message}; stderr: ${tail.join(" | ")}` : message;
}

export function withConfigNote(message: string, warnings: string[] | undefined): string {
  return warnings?.length ? `${message} (config: ${warnings.join(" ")})` : message;
}

/** Why a start failed, whether trying again may help, and whether only a login fixes it. */
export type Failure = { message: string; transient: boolean; needsLogin?: boolean };

/** What a failed start is to say, from its error, what the process left (exit, stderr), and the config's warnings. */
export function describeFailure(
  error: unknown,
  {
    name,
    spec,
    stderr,
    transport,
    exitedFirst,
    everReady,
  }: { name: string; spec: ServerSpec; stderr: StderrRing; transport: unknown; exitedFirst: boolean; everReady: boolean },
): Failure {
  // A network failure during the era probe comes wrapped: the cause says what went wrong.
  if (error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed && error.cause instanceof Error) error = error.cause;
  const url = spec.transport.type === "stdio" ? "" : spec.transport.url;
  if (PoolError.isInstance(error) && error.code === "CONNECT_TIMEOUT") {
    return { message: withConfigNote(withTail(error.message, stderr.telling(5)), spec.warnings), transient: false };
  }
  if (isAuthFailure(error))
    return {
      message: AuthRequiredError.isInstance(error) ? error.reason : needsLoginReason(name, "the server refused the stored login"),
      transient: false,
      needsLogin: true,
    };
  const http = describeHttpError(error, url);
  if (http && httpStatusOf(error) === 401)
    return { message: `${http}; if it uses OAuth, run \`codemux auth login ${name}\``, transient: false, needsLogin: true };
  if (http) return { message: http, transient: http.startsWith("cannot reach") || [429, 502, 503, 504].includes(httpStatusOf(error) ?? 0) };
  const network = describeNetworkFailure(error, url);
  if (network) return { message: network, transient: !isTlsCode(networkCause(error)?.code) };
  if (PoolError.isInstance(error) && (error.code === "COMMAND_NOT_FOUND" || error.code === "SPAWN_FAILED"))
    return { message: withTail(error.message, stderr.telling(5)), transient: false };
  if (exitedFirst || isConnectionClosed(error)) return { message: exitReason(transport, stderr), transient: everReady };
  const message = error instanceof Error ? error.message : String(error);
  return { message: withTail(message, stderr.telling(5)), transient: false };
}

/** How the process ended (or that the connection closed), with what it said last. */
export function exitReason(transport: unknown, stderr: StderrRing): string {
  const exit = exitOf(transport);
  const how = exit ? (exit.signal ? `the process was killed by ${exit.signal}` : `the process exited with code ${exit.code}`) : "the connection closed";
  return withTail(how, stderr.telling(5));
}
