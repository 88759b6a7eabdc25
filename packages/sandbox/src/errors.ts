/** Every stable code a sandbox error carries; callers branch on these, never on messages. */
export type SandboxErrorCode = "sandbox_closed" | "invalid_options";

/** Brand shared by every codemux package's errors; the value names the package. */
const BRAND = Symbol.for("codemux.error");

/** Base of every error this package throws; `code` is stable, the message is for people. */
export class SandboxError extends Error {
  readonly code: SandboxErrorCode;
  readonly data: unknown;
  readonly [BRAND] = "sandbox";

  constructor(code: SandboxErrorCode, message: string, options?: { cause?: unknown; data?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.data = options?.data;
  }

  /** True for a SandboxError from any installed copy of this package (checks the brand, not the class). */
  static isInstance(value: unknown): value is SandboxError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === "sandbox";
  }
}

/** Used after `close`; `execute` reports it as an `ok: false` result of kind "closed" instead of throwing. */
export class SandboxClosedError extends SandboxError {
  constructor() {
    super("sandbox_closed", "The sandbox is closed; create a new Sandbox to run more code.");
  }
}

/** A `SandboxOptions` value is out of range; thrown by the constructor. */
export class SandboxOptionsError extends SandboxError {
  constructor(message: string) {
    super("invalid_options", message);
  }
}
