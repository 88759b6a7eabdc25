import { CodemuxError } from "@codemux/core";

export type ServerErrorCode = "BAD_REQUEST" | "INVALID_ARGUMENTS" | "RESULT_NOT_FOUND" | "UNKNOWN_META_TOOL" | "STORE_FAILED" | "RESOURCE_READ_FAILED";

/** Base of every error @codemux/server raises; `code` is stable for callers to branch on. */
export class ServerError extends CodemuxError<ServerErrorCode> {
  static override readonly package = "server";
}

/** Arguments that do not match the tool's input schema; refused before the downstream is called. */
export class InvalidArgumentsError extends ServerError {
  constructor(
    readonly tool: string,
    readonly problems: string[],
  ) {
    super("INVALID_ARGUMENTS", `Invalid arguments for ${tool}: ${problems.join("; ")}`, { data: { tool, problems } });
  }
}

/** A meta-tool was called with arguments it cannot use. */
export class BadRequestError extends ServerError {
  constructor(message: string) {
    super("BAD_REQUEST", message);
  }
}

/** A resource read answered with an error result (by a plugin of the call pipeline) instead of contents. */
export class ResourceReadError extends ServerError {
  constructor(uri: string, reason: string) {
    super("RESOURCE_READ_FAILED", `Reading the resource "${uri.slice(0, 300)}" failed: ${reason}`);
  }
}

/** A meta-tool name the surface does not offer. */
export class UnknownMetaToolError extends ServerError {
  constructor(name: string, offered: readonly string[]) {
    super(
      "UNKNOWN_META_TOOL",
      `Unknown tool "${name.slice(0, 200)}". codemux offers ${offered.join(", ")}; downstream tools are called through call_tool or execute_code.`,
      { data: { offered } },
    );
  }
}

/** No kept result under this handle for this session: it expired, never existed, or belongs to another session. */
export class ResultNotFoundError extends ServerError {
  constructor(handle: string) {
    super("RESULT_NOT_FOUND", `No kept result "${handle.slice(0, 100)}": it expired or never existed. Call the tool again to get a fresh one.`);
  }
}

/** codemux could not write or read one of its own files (results, the catalog cache). */
export class StoreError extends ServerError {
  constructor(what: string, options: { cause: unknown }) {
    const reason = (options.cause as { code?: string })?.code ?? (options.cause instanceof Error ? options.cause.message : String(options.cause));
    super("STORE_FAILED", `codemux could not ${what} (${reason}); check that its data folder is writable and has space.`, options);
  }
}
