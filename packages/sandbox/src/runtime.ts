import type { SandboxErrorKind } from "./types.js";

/** Settings a runtime is created with, once per worker. */
export interface RuntimeOptions {
  /** Memory of one run; the engine may also cap its whole instance from it. */
  memoryLimitBytes: number;
  /**
   * JavaScript modules (by path, as in `ModuleSet.sources`) to build into each run's engine before
   * the run; the built-in QuickJS runtime uses them, another runtime (which gets bundles) may ignore them.
   */
  preload?: Record<string, string>;
}

/** Limits a runtime enforces on one run. */
export interface RuntimeLimits {
  memoryLimitBytes: number;
  maxResultBytes: number;
  /** Nesting of the result; a runtime that cannot check it may ignore it. */
  maxResultDepth?: number;
  /** JSON of one host call's arguments; larger calls reject in the guest. */
  maxCallArgsBytes?: number;
  /** Milliseconds the guest may compute, its waits on host calls and timers not counted; absent, the deadline alone bounds it. */
  cpuMs?: number;
}

/** ES modules for the engine to link itself: the snippet (the request's `code`) imports them. */
export interface ModuleSet {
  /** The snippet's module name; the request's `filename`. */
  entry: string;
  /** JavaScript of each module, by its resolved path (also its name in stack frames). */
  sources: Record<string, string>;
  /** What a specifier means in an importer: `${importer}\n${specifier}` to a path in `sources`. */
  links: Record<string, string>;
}

/** One ES module to evaluate: a bundle, or the snippet with `modules` to link. */
export interface RuntimeRequest {
  /** Module source; its `export default` is the result. */
  code: string;
  /** Name the runtime gives the module in stack frames. */
  filename: string;
  /**
   * Modules the snippet imports, linked by the engine; given only to the built-in QuickJS
   * runtime (a `runtimeModule` always gets one esbuild bundle). Absent, `code` is a whole bundle.
   */
  modules?: ModuleSet;
  /** Epoch milliseconds after which the run must stop. */
  deadline: number;
  limits: RuntimeLimits;
}

/** What the worker offers the guest, whatever the engine. */
export interface RuntimeHost {
  /** Forwards `__host_call`; arguments and answer are JSON text (undefined for `undefined`). */
  call(name: string, argsJson: string | undefined): Promise<string | undefined>;
  /** Appends console output; returns how many bytes the stream still accepts. */
  write(stream: "stdout" | "stderr", text: string): number;
  /** True once the caller cancelled; safe to poll from an interrupt handler. */
  isAborted(): boolean;
  /** Aborted together with `isAborted()` becoming true, for runs waiting on events. */
  signal: AbortSignal;
}

export interface RuntimeError {
  kind: SandboxErrorKind;
  /** Error name in the guest, e.g. "TypeError". */
  name?: string;
  message: string;
  /** Guest stack with positions in the bundle. */
  stack?: string;
}

export type RuntimeOutcome = (
  | { ok: true /** JSON of the default export; undefined when it is undefined. */; resultJson: string | undefined }
  | { ok: false; error: RuntimeError }
) & {
  /** The engine is no longer trustworthy; the worker is replaced after answering. */
  retire?: boolean;
  /**
   * With `modules`: the code failed before anything of it was seen: it did not compile or link, or
   * it threw before it yielded with no output (no call had left yet). The host runs it again through esbuild.
   */
  unlinked?: boolean;
};

/** A JavaScript engine that evaluates one bundle at a time inside a worker thread. */
export interface SandboxRuntime {
  run(request: RuntimeRequest, host: RuntimeHost): Promise<RuntimeOutcome>;
  /** Resolves when the next run can start without waiting (an engine prepared in the background); optional. */
  ready?(): Promise<void>;
}
