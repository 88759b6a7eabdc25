import { CodemuxError } from "@codemux/core";

export type CodegenErrorCode = "INVALID_SERVER_NAME" | "INVALID_FUNCTION_NAME" | "UNSAFE_PATH" | "WRITE_FAILED";

/** Base of every error @codemux/codegen raises; `code` is stable for callers to branch on. */
export class CodegenError extends CodemuxError<CodegenErrorCode> {
  static override readonly package = "codegen";
}

export class InvalidServerNameError extends CodegenError {
  constructor(readonly server: string) {
    super("INVALID_SERVER_NAME", `Server name ${JSON.stringify(server)} cannot name a module: use letters, digits, "-" and single "_".`);
  }
}

/** A tool's functionName cannot be a module's export (not an identifier, reserved, or taken). */
export class InvalidFunctionNameError extends CodegenError {
  constructor(
    readonly server: string,
    readonly functionName: string,
    reason: string,
  ) {
    super("INVALID_FUNCTION_NAME", `Tool function ${JSON.stringify(functionName)} of server "${server}" ${reason}.`);
  }
}

/** writeModuleTree was asked to write a file that would land outside its output directory. */
export class UnsafePathError extends CodegenError {
  constructor(
    readonly path: string,
    readonly outDir: string,
  ) {
    super("UNSAFE_PATH", `Refusing to write ${path}: it is outside the output directory ${outDir}.`);
  }
}

export class WriteError extends CodegenError {
  constructor(
    readonly outDir: string,
    options: { cause: unknown },
  ) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super("WRITE_FAILED", `Could not write the module tree to ${outDir} (${reason}); check that the directory is writable.`, options);
  }
}
