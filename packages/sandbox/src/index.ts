export { Sandbox } from "./sandbox.js";
export { SandboxClosedError, SandboxError, SandboxOptionsError } from "./errors.js";
export { bundleSnippet } from "./bundle.js";
export type { BundleInput, BundleOutcome } from "./bundle.js";
export type {
  ExecuteRequest,
  ExecuteResult,
  HostCallContext,
  ModuleResolver,
  SandboxErrorInfo,
  SandboxErrorKind,
  SandboxOptions,
} from "./types.js";
export type { RuntimeError, RuntimeHost, RuntimeLimits, RuntimeOptions, RuntimeOutcome, RuntimeRequest, SandboxRuntime } from "./runtime.js";
