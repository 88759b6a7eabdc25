import { CodemuxError, type InputRequiredResult } from "@codemux/core";

/** What a 2026 server's `input_required` answer carries, to any request that may ask (a tool call's, a prompt's, a resource read's). */
export type InputRequiredAnswer = Pick<InputRequiredResult, "inputRequests" | "requestState">;

export type ServerErrorCode =
  | "UNKNOWN_SERVER"
  | "BAD_REQUEST"
  | "INVALID_ARGUMENTS"
  | "RESULT_NOT_FOUND"
  | "UNKNOWN_META_TOOL"
  | "STORE_FAILED"
  | "RESOURCE_READ_FAILED"
  | "SKILL_READ_FAILED"
  | "POLICY_REFUSED"
  | "POLICY_RATE_LIMITED"
  | "INPUT_REQUIRED"
  | "INPUT_NOT_ASKED"
  | "INVALID_REQUEST_STATE";

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
  /** `data.hint: "findTools"` asks the front end to add its own way to find tools after the message. */
  constructor(message: string, data?: Record<string, unknown>) {
    super("BAD_REQUEST", message, data ? { data } : {});
  }
}

/** A resource read answered with an error result (by a plugin of the call pipeline) instead of contents. */
export class ResourceReadError extends ServerError {
  constructor(uri: string, reason: string) {
    super("RESOURCE_READ_FAILED", `Reading the resource "${uri.slice(0, 300)}" failed: ${reason}`, { data: { uri: uri.slice(0, 2048) } });
  }
}

/** A downstream server's skill could not be read (the server failed, or the file did not match what it listed). */
export class SkillReadError extends ServerError {
  constructor(skill: string, reason: string, options: { cause?: unknown } = {}) {
    super("SKILL_READ_FAILED", `Reading the skill "${skill}" failed: ${reason}`, { cause: options.cause, data: { skill } });
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
  /** `keptBy`: the caller's own result, kept by another of its sessions (said only to the principal it belongs to). */
  constructor(handle: string, elsewhere?: { keptBy: string }) {
    super(
      "RESULT_NOT_FOUND",
      elsewhere
        ? `Kept result "${handle.slice(0, 100)}" is yours, but another of your sessions kept it (the MCP session that called ${elsewhere.keptBy}), and a kept result is read only by the session that kept it: read it there with read_result, or call ${elsewhere.keptBy} again here.`
        : `No kept result "${handle.slice(0, 100)}": it expired or never existed. Call the tool again to get a fresh one.`,
    );
  }
}

/** codemux could not write or read one of its own files (results, the catalog cache). */
export class StoreError extends ServerError {
  constructor(what: string, options: { cause: unknown }) {
    const reason = (options.cause as { code?: string })?.code ?? (options.cause instanceof Error ? options.cause.message : String(options.cause));
    super("STORE_FAILED", `codemux could not ${what} (${reason}); check that its data folder is writable and has space.`, options);
  }
}

/** No server goes by the name asked for (in a search or a listing limited to one server). */
export class UnknownServerError extends ServerError {
  constructor(server: string, servers: readonly string[]) {
    super("UNKNOWN_SERVER", `No server named "${server.slice(0, 100)}". Servers: ${servers.join(", ") || "none"}.`, { data: { server: server.slice(0, 100) } });
  }
}

/** The principal's policy lets it see the tool but not call it this way (a read-only rule and a tool not marked read-only). */
export class PolicyRefusedError extends ServerError {
  static override readonly forCode = "POLICY_REFUSED";

  constructor(message: string, rule: string) {
    super("POLICY_REFUSED", message, { data: { rule } });
  }
}

/** The principal made more calls this minute than its policy rule allows; `retryAfterMs` says when one more passes. */
export class PolicyRateLimitedError extends ServerError {
  static override readonly forCode = "POLICY_RATE_LIMITED";

  constructor(
    message: string,
    rule: string,
    readonly retryAfterMs: number,
  ) {
    super("POLICY_RATE_LIMITED", message, { data: { rule, retryAfterMs } });
  }
}

/**
 * A 2026-era server needs input during a call whose client speaks 2026-07-28: the question can only go
 * back as that call's own `input_required` answer (a direct call_tool does that); a snippet or a job
 * that made the call gets this error, which it may catch.
 */
export class InputRequiredError extends ServerError {
  static override readonly forCode = "INPUT_REQUIRED";

  constructor(
    readonly tool: string,
    readonly result: InputRequiredAnswer,
  ) {
    const methods = [...new Set(Object.values(result.inputRequests ?? {}).map((request) => String(request.method).slice(0, 40)))].join(", ") || "its state";
    super(
      "INPUT_REQUIRED",
      `${tool} needs input (${methods}) that codemux could not ask for here: this client speaks MCP 2026-07-28, where only the client's own call can ask. Call ${tool} directly with call_tool to answer it.`,
      { data: { tool } },
    );
  }
}

/** A server asked during a call something codemux cannot ask the caller (no client to ask, a method it cannot answer, too many rounds). */
export class InputNotAskedError extends ServerError {
  constructor(tool: string, reason: string) {
    super("INPUT_NOT_ASKED", `${tool} needs input that codemux could not ask for: ${reason}.`, { data: { tool } });
  }
}

/** A retry's requestState that codemux did not issue to this principal for this tool, that was altered, or that expired. */
export class InvalidRequestStateError extends ServerError {
  static override readonly forCode = "INVALID_REQUEST_STATE";

  constructor(reason: string) {
    super("INVALID_REQUEST_STATE", `codemux refused the retry's requestState: ${reason}. Call the tool again without inputResponses and requestState.`);
  }
}
