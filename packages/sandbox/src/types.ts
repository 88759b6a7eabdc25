/** Returns the source (TypeScript or JavaScript) of a virtual module, or undefined when it does not exist. */
export type ModuleResolver = (specifier: string) => string | undefined;

export interface SandboxOptions {
  /** Worker threads evaluating snippets; default `Math.max(1, Math.min(2, os.availableParallelism()))`. */
  workers?: number;
  /** Executions waiting for a worker; default 50. Beyond it `execute` returns error kind "queue_full". */
  maxQueue?: number;
  /** Memory of one execution's JavaScript heap; default 64 MiB. */
  memoryLimitBytes?: number;
  /** No execution runs longer, whatever `timeoutMs` says; default 60 000. */
  hardTimeoutMs?: number;
  /** Cap for stdout and for stderr each; default 1 MiB. Cut output ends with a marker. */
  maxOutputBytes?: number;
  /** Cap for the JSON of the result; default 16 MiB. */
  maxResultBytes?: number;
  /**
   * Module loaded in every worker that exports `createRuntime(): SandboxRuntime | Promise<SandboxRuntime>`;
   * default the built-in QuickJS runtime.
   */
  runtimeModule?: string | URL;
}

export interface HostCallContext {
  /** Aborted when the run ends, times out or is cancelled. */
  signal: AbortSignal;
}

export interface ExecuteRequest {
  /** TypeScript ES module; top-level await allowed; the `export default` value is the result. */
  code: string;
  /** Name of the snippet in error messages; default "snippet.ts". */
  filename?: string;
  /** The only source of imports; every other import is refused. */
  modules?: ModuleResolver;
  /** Answers `__host_call(name, args)` from the guest; arguments and results cross as JSON. */
  onCall?: (name: string, args: unknown, context: HostCallContext) => Promise<unknown>;
  /** Wall-clock deadline of the whole run, waiting included; default 30 000, capped at `hardTimeoutMs`. */
  timeoutMs?: number;
  /** Cancels the run. */
  signal?: AbortSignal;
}

export type SandboxErrorKind =
  | "syntax"
  | "import"
  | "runtime"
  | "timeout"
  | "memory"
  | "stack_overflow"
  | "queue_full"
  | "aborted"
  | "worker_crashed"
  | "result"
  | "internal";

export interface SandboxErrorInfo {
  kind: SandboxErrorKind;
  /** A sentence naming the place (`snippet.ts:LINE:COL`) when there is one. */
  message: string;
  /** 1-based line in the snippet as written. */
  line?: number;
  /** 1-based column in the snippet as written. */
  column?: number;
  /** Guest stack, mapped to the sources as written. */
  stack?: string;
}

export interface ExecuteResult {
  ok: boolean;
  /** The default export as a JSON value; absent when it is undefined or the run failed. */
  result?: unknown;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
  /** Number of `__host_call` invocations that reached the host. */
  calls: number;
  error?: SandboxErrorInfo;
}
