/** Marks every codemux error, whichever package and installed copy made it; the value names the package. */
export const ERROR_BRAND: unique symbol = Symbol.for("codemux.error");

export type ServerErrorCode = "BAD_REQUEST" | "INVALID_ARGUMENTS" | "RESULT_NOT_FOUND" | "UNKNOWN_META_TOOL" | "STORE_FAILED" | "RESOURCE_READ_FAILED";

/** Base of every error @codemux/server raises; `code` is stable for callers to branch on. */
export class CodemuxError extends Error {
  readonly [ERROR_BRAND] = "server";
  readonly code: ServerErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: ServerErrorCode, message: string, options: { cause?: unknown; data?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.data = options.data;
  }

  /** True for an error of this package from any installed copy of it. */
  static isInstance(value: unknown): value is CodemuxError {
    return typeof value === "object" && value !== null && (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] === "server";
  }
}

/**
 * True for an error any codemux package raised on purpose (its message is a sentence for the user),
 * as opposed to a bug or a Node system error such as ENOENT, which must not pass for a tool's answer.
 */
export function isCodemuxError(value: unknown): value is Error & { code: string } {
  return value instanceof Error && typeof (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] === "string";
}

/** Arguments that do not match the tool's input schema; refused before the downstream is called. */
export class InvalidArgumentsError extends CodemuxError {
  constructor(
    readonly tool: string,
    readonly problems: string[],
  ) {
    super("INVALID_ARGUMENTS", `Invalid arguments for ${tool}: ${problems.join("; ")}`, { data: { tool, problems } });
  }
}

/** A meta-tool was called with arguments it cannot use. */
export class BadRequestError extends CodemuxError {
  constructor(message: string) {
    super("BAD_REQUEST", message);
  }
}

/** A resource read answered with an error result (by a plugin of the call pipeline) instead of contents. */
export class ResourceReadError extends CodemuxError {
  constructor(uri: string, reason: string) {
    super("RESOURCE_READ_FAILED", `Reading the resource "${uri.slice(0, 300)}" failed: ${reason}`);
  }
}

/** A meta-tool name the surface does not offer. */
export class UnknownMetaToolError extends CodemuxError {
  constructor(name: string, offered: readonly string[]) {
    super(
      "UNKNOWN_META_TOOL",
      `Unknown tool "${name.slice(0, 200)}". codemux offers ${offered.join(", ")}; downstream tools are called through call_tool or execute_code.`,
      { data: { offered } },
    );
  }
}

/** No kept result under this handle for this session: it expired, never existed, or belongs to another session. */
export class ResultNotFoundError extends CodemuxError {
  constructor(handle: string) {
    super("RESULT_NOT_FOUND", `No kept result "${handle.slice(0, 100)}": it expired or never existed. Call the tool again to get a fresh one.`);
  }
}

/** codemux could not write or read one of its own files (results, the catalog cache). */
export class StoreError extends CodemuxError {
  constructor(what: string, options: { cause: unknown }) {
    const reason = (options.cause as { code?: string })?.code ?? (options.cause instanceof Error ? options.cause.message : String(options.cause));
    super("STORE_FAILED", `codemux could not ${what} (${reason}); check that its data folder is writable and has space.`, options);
  }
}
