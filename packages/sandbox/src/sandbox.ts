import { isSwitchedOff } from "@codemux/core";
import { bundleSnippet, checkSnippet } from "./bundle.js";
import {
  DEFAULT_FILENAME,
  DEFAULT_HARD_TIMEOUT_MS,
  DEFAULT_MAX_CALL_ARGS_BYTES,
  DEFAULT_MAX_CODE_BYTES,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_QUEUE,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_RESULT_DEPTH,
  DEFAULT_MAX_RUN_PENDING_BYTES,
  DEFAULT_MAX_TOTAL_PENDING_BYTES,
  DEFAULT_MEMORY_LIMIT_BYTES,
  DEFAULT_TIMEOUT_MS,
  defaultWorkerCount,
  defaultWorkerUrl,
  MAX_ERROR_MESSAGE_LENGTH,
} from "./defaults.js";
import { type ErrorContext, toErrorInfo } from "./error-info.js";
import { SandboxOptionsError } from "./errors.js";
import { type FastPlan, planFast, preloadCode } from "./fast-path.js";
import { formatBytes } from "./output-buffer.js";
import type { PooledWorker, RunJob, WorkerReply } from "./pooled-worker.js";
import { BundlePositions, ModulePositions, type StackPositions } from "./source-map.js";
import type { CodeExecutor, ExecuteRequest, ExecuteResult, SandboxErrorInfo, SandboxOptions } from "./types.js";
import { WorkerPool } from "./worker-pool.js";

/** `CODEMUX_SANDBOX_FAST_PATH=0` (or `false`, `off`) sends every snippet through esbuild, as `fastPath: false` does. */
const FAST_PATH_VARIABLE = "CODEMUX_SANDBOX_FAST_PATH";

/** Name of the bundle inside the engine; stack frames naming it are mapped back through the source map. */
const BUNDLE_FILE = "bundle.js";

const EMPTY_OUTPUT = { stdout: "", stderr: "", stdoutTruncated: false, stderrTruncated: false };

type Outcome = Omit<ExecuteResult, "durationMs" | "calls">;

interface Limits {
  workers: number;
  maxQueue: number;
  memoryLimitBytes: number;
  hardTimeoutMs: number;
  maxOutputBytes: number;
  maxResultBytes: number;
  maxResultDepth: number;
  maxCodeBytes: number;
  maxRunPendingBytes: number;
  maxTotalPendingBytes: number;
  maxCallArgsBytes: number;
}

/** What one run holds: its calls' own signals, the answer bytes waiting for its guest, and why it was stopped. */
interface RunState {
  calls: number;
  pendingCalls: Set<AbortController>;
  pendingBytes: number;
  /** Set when the host stops the run itself (a budget); replaces whatever the worker answers. */
  failure: SandboxErrorInfo | undefined;
  stop: AbortController;
}

/**
 * Bundles TypeScript snippets with esbuild and runs each in a fresh QuickJS (WebAssembly) instance
 * on a pool of worker threads, so a runaway snippet never blocks the caller's event loop.
 *
 * @example
 * const sandbox = new Sandbox();
 * const run = await sandbox.execute({ code: "export default 6 * 7;" });
 * // run.ok === true, run.result === 42; on failure run.error.kind says why
 * await sandbox.close();
 */
export class Sandbox implements CodeExecutor {
  readonly #limits: Limits;
  readonly #pool: WorkerPool;
  /** The built-in engine links modules itself, so snippets skip esbuild (unless switched off); another runtime gets bundles. */
  readonly #fastPath: boolean;
  #admitted = 0;
  #runSeq = 0;
  #closed = false;
  /** Answer bytes held for all runs, against maxTotalPendingBytes. */
  #pendingBytes = 0;

  constructor(options: SandboxOptions = {}) {
    this.#limits = {
      workers: positiveInteger("workers", options.workers ?? defaultWorkerCount()),
      maxQueue: nonNegativeInteger("maxQueue", options.maxQueue ?? DEFAULT_MAX_QUEUE),
      memoryLimitBytes: positiveInteger("memoryLimitBytes", options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES),
      hardTimeoutMs: positiveInteger("hardTimeoutMs", options.hardTimeoutMs ?? DEFAULT_HARD_TIMEOUT_MS),
      maxOutputBytes: positiveInteger("maxOutputBytes", options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES),
      maxResultBytes: positiveInteger("maxResultBytes", options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES),
      maxResultDepth: positiveInteger("maxResultDepth", options.maxResultDepth ?? DEFAULT_MAX_RESULT_DEPTH),
      maxCodeBytes: positiveInteger("maxCodeBytes", options.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES),
      maxRunPendingBytes: positiveInteger("maxRunPendingBytes", options.maxRunPendingBytes ?? DEFAULT_MAX_RUN_PENDING_BYTES),
      maxTotalPendingBytes: positiveInteger("maxTotalPendingBytes", options.maxTotalPendingBytes ?? DEFAULT_MAX_TOTAL_PENDING_BYTES),
      maxCallArgsBytes: positiveInteger("maxCallArgsBytes", options.maxCallArgsBytes ?? DEFAULT_MAX_CALL_ARGS_BYTES),
    };
    const builtIn = options.runtimeModule === undefined;
    this.#fastPath = builtIn && (options.fastPath ?? !isSwitchedOff(process.env[FAST_PATH_VARIABLE]));
    // Another runtime, or the built-in one without the fast path, gets bundles, which carry their own copy of every module.
    const checked = options.preloadModules !== undefined && builtIn ? preloadModules(options.preloadModules) : undefined;
    const preload = this.#fastPath ? checked : undefined;
    const workerUrl = options.workerUrl ?? defaultWorkerUrl();
    this.#pool = new WorkerPool({
      size: this.#limits.workers,
      url: typeof workerUrl === "string" ? new URL(workerUrl) : workerUrl,
      runtimeModule: options.runtimeModule?.toString(),
      runtimeOptions: { memoryLimitBytes: this.#limits.memoryLimitBytes, ...(preload ? { preload } : {}) },
    });
  }

  /** Runs one snippet. Never throws: every problem, misuse included, is `ok: false` with an error kind. */
  async execute(request: ExecuteRequest): Promise<ExecuteResult> {
    const started = performance.now();
    const state: RunState = { calls: 0, pendingCalls: new Set(), pendingBytes: 0, failure: undefined, stop: new AbortController() };
    // Completed in place, not spread: a spread would read `result` and so parse a large value on this thread (see withResult).
    const finish = (outcome: Outcome): ExecuteResult =>
      Object.assign(outcome as ExecuteResult, { durationMs: Math.round((performance.now() - started) * 100) / 100, calls: state.calls });
    if (this.#closed) return finish(failure({ kind: "closed", message: "The sandbox is closed; create a new Sandbox to run more code." }));
    const invalid = invalidRequest(request);
    if (invalid) return finish(failure({ kind: "invalid_request", message: invalid }));
    const capacity = this.#limits.workers + this.#limits.maxQueue;
    if (this.#admitted >= capacity) {
      const message = `The sandbox is busy: ${this.#limits.workers} running and ${this.#limits.maxQueue} waiting. Try again shortly.`;
      return finish(failure({ kind: "queue_full", message }));
    }
    this.#admitted++;
    try {
      const effectiveTimeout = Math.min(request.timeoutMs ?? DEFAULT_TIMEOUT_MS, this.#limits.hardTimeoutMs);
      // A run allowed to wait longer (a background job) keeps the capped timeout as the bound of its own computing.
      const waitMs = request.waitTimeoutMs !== undefined && request.waitTimeoutMs > effectiveTimeout ? request.waitTimeoutMs : undefined;
      const wall = waitMs ?? effectiveTimeout;
      return finish(
        await this.#run(request, { deadline: Date.now() + wall, timeoutMs: wall, state, ...(waitMs !== undefined ? { cpuMs: effectiveTimeout } : {}) }),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return finish(failure({ kind: "internal", message: `The sandbox failed: ${message.slice(0, MAX_ERROR_MESSAGE_LENGTH)}` }));
    } finally {
      this.#admitted--;
      // Answers the guest never took are no longer held.
      this.#pendingBytes -= state.pendingBytes;
      state.pendingBytes = 0;
      for (const call of state.pendingCalls) call.abort(new Error("The sandbox run ended."));
      state.pendingCalls.clear();
    }
  }

  /** Stops every worker; runs in progress and later `execute` calls answer with kind "closed". */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#pool.close();
  }

  async #run(request: ExecuteRequest, run: { deadline: number; timeoutMs: number; state: RunState; cpuMs?: number }): Promise<Outcome> {
    const { deadline, cpuMs } = run;
    const filename = request.filename ?? DEFAULT_FILENAME;
    if (request.signal?.aborted) return cancelled(filename);
    const input = {
      code: request.code,
      filename,
      modules: request.modules,
      suggest: request.suggestModules,
      maxCodeBytes: this.#limits.maxCodeBytes,
      deadline,
    };
    const refused = checkSnippet(input);
    if (refused) return failure(refused);
    const plan = this.#fastPath ? planFast(input) : undefined;
    if (plan) {
      const job = this.#fastJob(request, plan, { filename, cpuMs });
      const outcome = await this.#runJob(request, { ...run, job, positionsOf: (reply) => this.#fastPositions(filename, plan, reply) });
      // It did not compile or link, or threw before it yielded with nothing seen: esbuild reports the error, or bundles it to run again.
      if (outcome !== "unlinked") return outcome;
    }
    const bundle = await bundleSnippet(input);
    if (!bundle.ok) return failure(bundle.error);
    request.onBundle?.({ entry: request.code, bundle: bundle.code, map: bundle.map });
    const job = this.#job(bundle.code, BUNDLE_FILE, { deadline, cpuMs });
    const outcome = await this.#runJob(request, { ...run, job, positionsOf: () => new BundlePositions({ map: bundle.map, bundleFile: BUNDLE_FILE }) });
    if (outcome === "unlinked") throw new Error("a bundle was reported as not linked");
    return outcome;
  }

  #job(code: string, filename: string, { deadline, cpuMs }: { deadline: number; cpuMs: number | undefined }): RunJob {
    return {
      type: "run",
      runId: ++this.#runSeq,
      code,
      filename,
      deadline,
      limits: {
        memoryLimitBytes: this.#limits.memoryLimitBytes,
        maxResultBytes: this.#limits.maxResultBytes,
        maxResultDepth: this.#limits.maxResultDepth,
        maxCallArgsBytes: this.#limits.maxCallArgsBytes,
        ...(cpuMs !== undefined ? { cpuMs } : {}),
      },
      maxOutputBytes: this.#limits.maxOutputBytes,
    };
  }

  #fastJob(request: ExecuteRequest, plan: FastPlan, { filename, cpuMs }: { filename: string; cpuMs: number | undefined }): RunJob {
    const job = this.#job(request.code, filename, { deadline: Number.NaN, cpuMs });
    return { ...job, modules: plan.modules, ...(request.onBundle ? { wantCompiled: true } : {}) };
  }

  #fastPositions(filename: string, plan: FastPlan, reply: WorkerReply): StackPositions {
    const entryMap = reply.type === "done" ? reply.entry?.map : undefined;
    return new ModulePositions({
      names: [filename, ...Object.keys(plan.modules.sources)],
      mapOf: (name) => (name === filename ? entryMap : plan.mapOf(name)),
    });
  }

  /** Runs one job on a worker; "unlinked" when the fast path's code failed before anything of it was seen (see RuntimeOutcome). */
  async #runJob(
    request: ExecuteRequest,
    run: { deadline: number; timeoutMs: number; state: RunState; job: RunJob; positionsOf: (reply: WorkerReply) => StackPositions },
  ): Promise<Outcome | "unlinked"> {
    const { deadline, timeoutMs, state, job, positionsOf } = run;
    const filename = request.filename ?? DEFAULT_FILENAME;
    const late = (what: string) => failure({ kind: "timeout", message: `${filename}: The run passed its ${timeoutMs} ms deadline ${what}.` });
    if (request.signal?.aborted) return cancelled(filename);
    const ticket = this.#pool.acquire();
    const worker = await waitFor(ticket.worker, deadline, request.signal);
    if (worker === "aborted" || worker === "timeout") {
      ticket.cancel();
      return worker === "aborted" ? cancelled(filename) : late("while waiting for a free worker");
    }
    const stopRun = () => state.stop.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", stopRun, { once: true });
    try {
      const reply = await worker.run(
        { ...job, deadline },
        {
          hardDeadline: deadline,
          signal: state.stop.signal,
          onCall: (name, json) => {
            state.calls++;
            return this.#hostCall(request, { name, json, state, filename });
          },
          onTaken: (chars) => this.#release(state, chars),
        },
      );
      // Run again through esbuild only when that is cheap: the runtime says "unlinked" only when the guest did little work before it failed (see MAX_REDO_TICKS).
      if (reply.type === "done" && reply.outcome.unlinked && job.modules && !state.failure) return "unlinked";
      if (job.modules && request.onBundle && reply.type === "done") {
        const modules = Object.entries(job.modules.sources).map(([path, code]) => `\n// ---- module ${JSON.stringify(path)} ----\n${code}`);
        const header = `// ${filename}, types stripped; QuickJS links the modules below itself\n`;
        request.onBundle({ entry: request.code, bundle: `${header}${reply.entry?.code ?? ""}${modules.join("")}`, map: reply.entry?.map ?? "" });
      }
      let positions: StackPositions | undefined;
      return this.#outcome(reply, state, {
        filename,
        code: request.code,
        timeoutMs,
        memoryLimitBytes: this.#limits.memoryLimitBytes,
        positions: () => (positions ??= positionsOf(reply)),
      });
    } finally {
      request.signal?.removeEventListener("abort", stopRun);
      this.#pool.release(worker);
    }
  }

  /** One guest call: its own signal, aborted only if it is still pending when the run ends. */
  async #hostCall(request: ExecuteRequest, call: { name: string; json: string | undefined; state: RunState; filename: string }): Promise<string | undefined> {
    const { name, json, state } = call;
    if (!request.onCall) throw new Error(`No host functions are available in this sandbox (called ${JSON.stringify(name)}).`);
    const args: unknown = json === undefined ? undefined : JSON.parse(json);
    const controller = new AbortController();
    state.pendingCalls.add(controller);
    let result: unknown;
    try {
      result = await request.onCall(name, args, { signal: controller.signal });
    } finally {
      // Detached once settled: a listener the callee left on the signal never fires.
      state.pendingCalls.delete(controller);
    }
    let answer: string | undefined;
    try {
      answer = JSON.stringify(result);
    } catch (error) {
      throw new Error(`The result of host call ${JSON.stringify(name)} has no JSON form: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (answer === undefined) return undefined;
    if (answer.length > this.#limits.maxResultBytes) {
      throw new Error(`The result of host call ${JSON.stringify(name)} is larger than the ${formatBytes(this.#limits.maxResultBytes)} limit.`);
    }
    this.#hold(state, answer.length, call.filename);
    return answer;
  }

  /** Counts an answer against the run's and the sandbox's budgets; past either, the run is stopped. */
  #hold(state: RunState, chars: number, filename: string): void {
    if (state.failure) throw new Error("The run was stopped.");
    const run = state.pendingBytes + chars;
    const total = this.#pendingBytes + chars;
    if (run > this.#limits.maxRunPendingBytes || total > this.#limits.maxTotalPendingBytes) {
      const which =
        run > this.#limits.maxRunPendingBytes
          ? `this run's ${formatBytes(this.#limits.maxRunPendingBytes)} budget`
          : `the sandbox's ${formatBytes(this.#limits.maxTotalPendingBytes)} budget for all runs`;
      state.failure = {
        kind: "budget",
        message: `${filename}: The answers of host calls waiting for this snippet passed ${which}. Await fewer large calls at once (for example in batches), or ask the tools for less.`,
      };
      state.stop.abort(new Error("budget"));
      throw new Error("The run was stopped: too many answer bytes in flight.");
    }
    state.pendingBytes = run;
    this.#pendingBytes = total;
  }

  #release(state: RunState, chars: number): void {
    const released = Math.min(chars, state.pendingBytes);
    state.pendingBytes -= released;
    this.#pendingBytes -= released;
  }

  #outcome(reply: WorkerReply, state: RunState, context: ErrorContext): Outcome {
    const where = context.filename;
    const output = reply.type === "done" ? reply.output : EMPTY_OUTPUT;
    if (state.failure) return { ok: false, ...output, error: state.failure };
    switch (reply.type) {
      case "crashed":
        if (this.#closed) return failure({ kind: "closed", message: `${where}: The sandbox was closed during the run.` });
        return failure({ kind: "worker_crashed", message: `${where}: ${reply.message} The run was lost; a fresh worker takes its place.` });
      case "killed":
        return reply.reason === "aborted"
          ? failure({ kind: "aborted", message: `${where}: The run was cancelled.` })
          : failure({ kind: "timeout", message: `${where}: The snippet ran past its ${context.timeoutMs} ms deadline and its worker was stopped.` });
      case "done": {
        const { outcome } = reply;
        if (!outcome.ok) return { ok: false, ...output, error: toErrorInfo(outcome.error, context) };
        if (outcome.resultJson === undefined) return { ok: true, ...output };
        return withResult({ ok: true, ...output }, outcome.resultJson);
      }
    }
  }
}

/**
 * The default export's value, parsed from its JSON only when first read. The JSON comes as `resultJson`, which answers
 * embed as it is: a snippet's large value (millions of nodes in a few MB) is then never parsed on the host's event loop,
 * where it would hold up every other client.
 */
function withResult(outcome: Outcome, json: string): Outcome {
  let parsed: { value: unknown } | undefined;
  return Object.defineProperties(outcome, {
    resultJson: { value: json, enumerable: false },
    result: { enumerable: true, configurable: true, get: () => (parsed ??= { value: JSON.parse(json) as unknown }).value },
  });
}

function cancelled(filename: string): Outcome {
  return failure({ kind: "aborted", message: `${filename}: The run was cancelled.` });
}

function failure(error: SandboxErrorInfo): Outcome {
  return { ok: false, ...EMPTY_OUTPUT, error };
}

/** Why a request cannot be run, or undefined. */
function invalidRequest(request: ExecuteRequest): string | undefined {
  if (typeof request !== "object" || request === null) return "The request must be an object with a `code` string.";
  if (typeof request.code !== "string") return "The request's `code` must be a string of TypeScript.";
  const timeoutMs = request.timeoutMs;
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0)) {
    return `timeoutMs must be a positive number of milliseconds, not ${String(timeoutMs).slice(0, 40)}.`;
  }
  const waitMs = request.waitTimeoutMs;
  if (waitMs !== undefined && !(typeof waitMs === "number" && waitMs > 0)) {
    return `waitTimeoutMs must be a positive number of milliseconds, not ${String(waitMs).slice(0, 40)}.`;
  }
  if (request.filename !== undefined && (typeof request.filename !== "string" || request.filename.length > 256 || request.filename === "")) {
    return "The request's `filename` must be a short non-empty string.";
  }
  return undefined;
}

/** Resolves with the worker, or with why the wait ended first. */
function waitFor(worker: Promise<PooledWorker>, deadline: number, signal: AbortSignal | undefined): Promise<PooledWorker | "aborted" | "timeout"> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done("timeout"), Math.max(0, deadline - Date.now()));
    const onAbort = () => done("aborted");
    const done = (value: PooledWorker | "aborted" | "timeout") => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(value);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    void worker.then(done);
  });
}

/** The JavaScript of each module to preload, stripped as the fast path strips it for a run (so the worker can tell it is the same). */
function preloadModules(modules: Record<string, string>): Record<string, string> {
  if (typeof modules !== "object" || modules === null) throw new SandboxOptionsError("preloadModules must map module paths to their sources.");
  const preload: Record<string, string> = {};
  for (const [path, source] of Object.entries(modules)) {
    const code = typeof source === "string" ? preloadCode(path, source) : undefined;
    if (code === undefined) {
      throw new SandboxOptionsError(
        `preloadModules[${JSON.stringify(path.slice(0, 100))}] must be a module path (as imports resolve to it) with a source that imports nothing and whose types the fast path strips.`,
      );
    }
    preload[path] = code;
  }
  return preload;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new SandboxOptionsError(`${name} must be a positive integer, not ${value}.`);
  return value;
}

function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new SandboxOptionsError(`${name} must be zero or a positive integer, not ${value}.`);
  return value;
}
