export { Sandbox } from "./sandbox.js";
export { SandboxClosedError, SandboxError, SandboxOptionsError } from "./errors.js";
export type { SandboxErrorCode } from "./errors.js";
export { HOST_CALL_GLOBAL, REMOVED_GLOBALS, SANDBOX_GLOBALS } from "./globals.js";
export { snippetImports } from "./imports.js";
export type {
  CodeExecutor,
  ExecuteRequest,
  ExecuteResult,
  HostCallContext,
  ModuleResolver,
  ModuleSuggester,
  SandboxErrorInfo,
  SandboxErrorKind,
  SandboxOptions,
} from "./types.js";
export type { RuntimeError, RuntimeHost, RuntimeLimits, RuntimeOptions, RuntimeOutcome, RuntimeRequest, SandboxRuntime } from "./runtime.js";
