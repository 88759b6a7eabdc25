export { Sandbox } from "./sandbox.js";
export { SandboxClosedError, SandboxError, SandboxOptionsError } from "./errors.js";
export type { SandboxErrorCode } from "./errors.js";
export { HOST_CALL_GLOBAL, REMOVED_GLOBALS, SANDBOX_GLOBALS } from "./globals.js";
export { DEFAULT_HARD_TIMEOUT_MS, DEFAULT_MAX_CONCURRENT_BUNDLES, DEFAULT_MAX_QUEUE, DEFAULT_MAX_RESULT_DEPTH, DEFAULT_TIMEOUT_MS } from "./defaults.js";
export { bundleSnippet } from "./bundle.js";
export { snippetImports } from "./imports.js";
export type { BundleInput, BundleOutcome } from "./bundle.js";
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
