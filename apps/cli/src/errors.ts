import { PluginConfigError } from "@codemux/hooks";
import { ConfigError } from "@codemux/pool";
import { RuntimeError } from "@codemux/runtime";
import { constants } from "node:os";

/** A failure the user caused or can fix; printed as one sentence, with an exit code (2: usage, as the README says). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

/** A one-shot command stopped by Ctrl+C (SIGINT) or SIGTERM: exit 128 + the signal's number, as a shell reports it. */
export class InterruptedError extends UsageError {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted (${signal === "SIGINT" ? "Ctrl+C" : signal}); the servers were stopped.`, signalExitCode(signal));
  }
}

/** 130 for SIGINT, 143 for SIGTERM. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** Another background server already serves this config. */
export class DaemonRunningError extends UsageError {
  constructor(readonly info: { url: string; pid: number }) {
    super(`codemux already serves this config at ${info.url} (pid ${info.pid}); stop it with \`codemux stop\`, or use \`codemux restart\`.`, 1);
  }
}

/** A config error (or a setting, store or root a start refused) is the user's to fix: exit 2 with its sentence. */
export function isUsageFailure(error: unknown): error is Error {
  return error instanceof UsageError || ConfigError.isInstance(error) || PluginConfigError.isInstance(error) || RuntimeError.isInstance(error);
}
