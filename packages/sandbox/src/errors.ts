/** Base of every error this package throws; `code` is stable, the message is for people. */
export class SandboxError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** `execute` was called after `close`. */
export class SandboxClosedError extends SandboxError {
  constructor() {
    super("sandbox_closed", "The sandbox is closed; create a new Sandbox to run more code.");
  }
}

/** A `SandboxOptions` value is out of range. */
export class SandboxOptionsError extends SandboxError {
  constructor(message: string) {
    super("invalid_options", message);
  }
}
