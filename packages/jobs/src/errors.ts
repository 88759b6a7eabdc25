/** Marks every codemux error, whichever package and installed copy made it; the value names the package. */
export const ERROR_BRAND: unique symbol = Symbol.for("codemux.error");

export type JobsErrorCode = "NOT_FOUND" | "QUEUE_FULL" | "CLOSED" | "NO_SAMPLING" | "BAD_RESUME" | "AGENT_FAILED" | "BAD_REQUEST";

/** Base of every error @codemux/jobs raises; `code` is stable for callers to branch on (REST maps QUEUE_FULL to 429, NOT_FOUND to 404). */
export class JobsError extends Error {
  readonly [ERROR_BRAND] = "jobs";
  readonly code: JobsErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: JobsErrorCode, message: string, options: { cause?: unknown; data?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.data = options.data;
  }

  /** True for an error of this package from any installed copy of it. */
  static isInstance(value: unknown): value is JobsError {
    return typeof value === "object" && value !== null && (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] === "jobs";
  }
}
