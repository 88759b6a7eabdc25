/** Returns the source (TypeScript or JavaScript) of a virtual module, or undefined when it does not exist. */
export type ModuleResolver = (specifier: string) => string | undefined;

/** Module paths spelled close to one that does not exist, best first (the import error names up to three). */
export type ModuleSuggester = (specifier: string) => readonly string[];

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
  /**
   * Whether the built-in runtime may skip esbuild for the snippets its fast path can vouch for (they then
   * answer as esbuild's bundle would, only sooner); default on, unless the environment says
   * `CODEMUX_SANDBOX_FAST_PATH=0` (or `false`, `off`). Another `runtimeModule` always gets bundles.
   */
  fastPath?: boolean;
  /** The worker entry file; default `worker.js` next to this package's `index.js`. Set it when a bundler moves files. */
  workerUrl?: string | URL;
  /** Nesting depth of the result; default 256. Deeper results are an error of kind "result". */
  maxResultDepth?: number;
  /** Largest snippet in UTF-8 bytes; default 1 MiB. Larger ones are an error of kind "budget". */
  maxCodeBytes?: number;
  /** JSON of host call answers one run holds before its guest takes them; default 64 MiB. Beyond it the run fails with kind "budget". */
  maxRunPendingBytes?: number;
  /** The same summed over all runs of this sandbox; default 256 MiB. The run whose answer crosses it fails with kind "budget". */
  maxTotalPendingBytes?: number;
  /** JSON of one host call's arguments; default 16 MiB. Beyond it that call rejects in the guest. */
  maxCallArgsBytes?: number;
  /**
   * Modules nearly every snippet imports, by path as `modules` resolves them (`"mcp/bridge"`), with the
   * source it returns for them: each run's fresh engine compiles and evaluates them in the background,
   * before the run, so a snippet that imports one does not wait for it. Trusted code that must import
   * nothing and have no side effects (it is evaluated whether or not the snippet imports it). A run whose
   * resolver returns another source for such a path gets an engine without them.
   */
  preloadModules?: Record<string, string>;
}

export interface HostCallContext {
  /** This call's own signal: aborted when the run ends, times out or is cancelled while the call is still pending; never after it settled. */
  signal: AbortSignal;
}

export interface ExecuteRequest {
  /** TypeScript ES module; top-level await allowed; the `export default` value is the result. */
  code: string;
  /** Name of the snippet in error messages; default "snippet.ts". */
  filename?: string;
  /** The only source of imports; every other import is refused. */
  modules?: ModuleResolver;
  /** Names modules close to a missing one, for a did-you-mean in the import error. */
  suggestModules?: ModuleSuggester;
  /** Answers `__host_call(name, args)` from the guest; arguments and results cross as JSON. */
  onCall?: (name: string, args: unknown, context: HostCallContext) => Promise<unknown>;
  /** Wall-clock deadline of the whole run, waiting included; default 30 000, capped at `hardTimeoutMs`. */
  timeoutMs?: number;
  /**
   * A longer wall-clock deadline for a run that mostly waits on host calls (a background job): the run
   * may last this long, while the time the guest itself computes stays bounded by `timeoutMs`.
   */
  waitTimeoutMs?: number;
  /** Cancels the run. */
  signal?: AbortSignal;
  /** Told the snippet and the bundle made of it (with its source map) before it runs, for debugging. */
  onBundle?: (bundle: { entry: string; bundle: string; map: string }) => void;
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
  /** A byte or size budget was exceeded: the snippet's size, or host call answers held at once. */
  | "budget"
  /** The sandbox was closed before or during the run. */
  | "closed"
  /** The request itself is malformed (a bad `timeoutMs`, `code` not a string). */
  | "invalid_request"
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
  /** The default export as a JSON value, parsed when first read; absent when it is undefined or the run failed. */
  result?: unknown;
  /** The default export's JSON text, beside `result` (not enumerable): a front end embeds it without parsing the value. */
  readonly resultJson?: string;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
  /** Number of `__host_call` invocations that reached the host. */
  calls: number;
  error?: SandboxErrorInfo;
}

/**
 * Runs snippets. `execute` never throws or rejects: every problem, misuse included, is an
 * `ok: false` result with an error kind. `Sandbox` implements it; a server may take any other.
 */
export interface CodeExecutor {
  execute(request: ExecuteRequest): Promise<ExecuteResult>;
  close(): Promise<void>;
}
