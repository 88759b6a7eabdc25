/** Base of every error @codemux/server raises; `code` is stable for callers to branch on. */
export class CodemuxError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Arguments that do not match the tool's input schema; refused before the downstream is called. */
export class InvalidArgumentsError extends CodemuxError {
  constructor(readonly tool: string, readonly problems: string[]) {
    super("INVALID_ARGUMENTS", `Invalid arguments for ${tool}: ${problems.join("; ")}`);
  }
}

/** A meta-tool was called with arguments it cannot use. */
export class BadRequestError extends CodemuxError {
  constructor(message: string) {
    super("BAD_REQUEST", message);
  }
}

export class ResultNotFoundError extends CodemuxError {
  constructor(handle: string) {
    super("RESULT_NOT_FOUND", `No kept result "${handle}": it expired or never existed. Call the tool again to get a fresh one.`);
  }
}
