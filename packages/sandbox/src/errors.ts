import { CodemuxError } from "@codemux/core";

/** Every stable code a sandbox error carries; callers branch on these, never on messages. */
export type SandboxErrorCode = "SANDBOX_CLOSED" | "INVALID_OPTIONS";

/** Base of every error this package throws; `code` is stable, the message is for people. */
export class SandboxError extends CodemuxError<SandboxErrorCode> {
  static override readonly package = "sandbox";
}

/** Used after `close`; `execute` reports it as an `ok: false` result of kind "closed" instead of throwing. */
export class SandboxClosedError extends SandboxError {
  constructor() {
    super("SANDBOX_CLOSED", "The sandbox is closed; create a new Sandbox to run more code.");
  }
}

/** A `SandboxOptions` value is out of range; thrown by the constructor. */
export class SandboxOptionsError extends SandboxError {
  constructor(message: string) {
    super("INVALID_OPTIONS", message);
  }
}
