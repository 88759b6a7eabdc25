import { setMaxListeners } from "node:events";
import { bundleSnippet } from "./bundle.js";
import {
  DEFAULT_FILENAME,
  DEFAULT_HARD_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_QUEUE,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MEMORY_LIMIT_BYTES,
  DEFAULT_TIMEOUT_MS,
  defaultWorkerCount,
} from "./defaults.js";
import { toErrorInfo } from "./error-info.js";
import { SandboxClosedError, SandboxOptionsError } from "./errors.js";
import type { PooledWorker, WorkerReply } from "./pooled-worker.js";
import { BundlePositions } from "./source-map.js";
import type { ExecuteRequest, ExecuteResult, SandboxErrorInfo, SandboxOptions } from "./types.js";
import { WorkerPool } from "./worker-pool.js";

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
}

/**
 * Bundles TypeScript snippets with esbuild and runs each in a fresh QuickJS (WebAssembly) runtime
 * on a pool of worker threads, so a runaway snippet never blocks the caller's event loop.
 */
export class Sandbox {
  readonly #limits: Limits;
  readonly #pool: WorkerPool;
  #admitted = 0;
  #runSeq = 0;
  #closed = false;

  constructor(options: SandboxOptions = {}) {
    this.#limits = {
      workers: positiveInteger("workers", options.workers ?? defaultWorkerCount()),
      maxQueue: nonNegativeInteger("maxQueue", options.maxQueue ?? DEFAULT_MAX_QUEUE),
      memoryLimitBytes: positiveInteger("memoryLimitBytes", options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES),
      hardTimeoutMs: positiveInteger("hardTimeoutMs", options.hardTimeoutMs ?? DEFAULT_HARD_TIMEOUT_MS),
      maxOutputBytes: positiveInteger("maxOutputBytes", options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES),
      maxResultBytes: positiveInteger("maxResultBytes", options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES),
    };
    this.#pool = new WorkerPool({
      size: this.#limits.workers,
      url: new URL("./worker.js", import.meta.url),
      runtimeModule: options.runtimeModule?.toString(),
      runtimeOptions: { memoryLimitBytes: this.#limits.memoryLimitBytes },
    });
  }

  /** Runs one snippet. Problems of the snippet come back as `ok: false`; only misuse throws. */
  async execute(request: ExecuteRequest): Promise<ExecuteResult> {
    if (this.#closed) throw new SandboxClosedError();
    const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new SandboxOptionsError(`timeoutMs must be a positive number of milliseconds, not ${timeoutMs}.`);
    const started = performance.now();
    const counter = { calls: 0 };
    const finish = (outcome: Outcome): ExecuteResult => ({
      ...outcome,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      calls: counter.calls,
    });
    const capacity = this.#limits.workers + this.#limits.maxQueue;
    if (this.#admitted >= capacity) {
      const message = `The sandbox is busy: ${this.#limits.workers} running and ${this.#limits.maxQueue} waiting. Try again shortly.`;
      return finish(failure({ kind: "queue_full", message }));
    }
    this.#admitted++;
    try {
      const effectiveTimeout = Math.min(timeoutMs, this.#limits.hardTimeoutMs);
      return finish(await this.#run(request, Date.now() + effectiveTimeout, effectiveTimeout, counter));
    } finally {
      this.#admitted--;
    }
  }

  /** Stops every worker; later `execute` calls throw. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#pool.close();
  }

  async #run(request: ExecuteRequest, deadline: number, timeoutMs: number, counter: { calls: number }): Promise<Outcome> {
    const filename = request.filename ?? DEFAULT_FILENAME;
    const cancelled = () => failure({ kind: "aborted", message: `${filename}: The run was cancelled.` });
    const late = (what: string) => failure({ kind: "timeout", message: `${filename}: The run passed its ${timeoutMs} ms deadline ${what}.` });
    if (request.signal?.aborted) return cancelled();
    const bundle = await bundleSnippet({ code: request.code, filename, modules: request.modules });
    if (!bundle.ok) return failure(bundle.error);
    if (request.signal?.aborted) return cancelled();
    const ticket = this.#pool.acquire();
    const worker = await waitFor(ticket.worker, deadline, request.signal);
    if (worker === "aborted" || worker === "timeout") {
      ticket.cancel();
      return worker === "aborted" ? cancelled() : late("while waiting for a free worker");
    }
    const calls = new AbortController();
    // Every call of the run listens on this one signal; a snippet may have hundreds in flight.
    setMaxListeners(0, calls.signal);
    const abortCalls = () => calls.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", abortCalls, { once: true });
    try {
      const reply = await worker.run(
        {
          type: "run",
          runId: ++this.#runSeq,
          code: bundle.code,
          filename: BUNDLE_FILE,
          deadline,
          limits: { memoryLimitBytes: this.#limits.memoryLimitBytes, maxResultBytes: this.#limits.maxResultBytes },
          maxOutputBytes: this.#limits.maxOutputBytes,
        },
        {
          hardDeadline: deadline,
          signal: request.signal,
          onCall: (name, json) => {
            counter.calls++;
            return this.#hostCall(request, name, json, calls.signal);
          },
        },
      );
      let positions: BundlePositions | undefined;
      return this.#outcome(reply, {
        filename,
        timeoutMs,
        memoryLimitBytes: this.#limits.memoryLimitBytes,
        positions: () => (positions ??= new BundlePositions({ map: bundle.map, bundleFile: BUNDLE_FILE })),
      });
    } finally {
      request.signal?.removeEventListener("abort", abortCalls);
      calls.abort(new Error("The sandbox run ended."));
      this.#pool.release(worker);
    }
  }

  async #hostCall(request: ExecuteRequest, name: string, json: string | undefined, signal: AbortSignal): Promise<string | undefined> {
    if (!request.onCall) throw new Error(`No host functions are available in this sandbox (called "${name}").`);
    const args: unknown = json === undefined ? undefined : JSON.parse(json);
    const result = await request.onCall(name, args, { signal });
    let answer: string | undefined;
    try {
      answer = JSON.stringify(result);
    } catch (error) {
      throw new Error(`The result of host call "${name}" has no JSON form: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (answer !== undefined && answer.length > this.#limits.maxResultBytes) {
      throw new Error(`The result of host call "${name}" is larger than the ${this.#limits.maxResultBytes}-byte limit.`);
    }
    return answer;
  }

  #outcome(reply: WorkerReply, context: Parameters<typeof toErrorInfo>[1]): Outcome {
    const where = context.filename;
    switch (reply.type) {
      case "crashed":
        return failure({ kind: "worker_crashed", message: `${where}: ${reply.message} The run was lost; a fresh worker takes its place.` });
      case "killed":
        return reply.reason === "aborted"
          ? failure({ kind: "aborted", message: `${where}: The run was cancelled.` })
          : failure({ kind: "timeout", message: `${where}: The snippet ran past its ${context.timeoutMs} ms deadline and its worker was stopped.` });
      case "done": {
        const { outcome, output } = reply;
        if (!outcome.ok) return { ok: false, ...output, error: toErrorInfo(outcome.error, context) };
        if (outcome.resultJson === undefined) return { ok: true, ...output };
        return { ok: true, ...output, result: JSON.parse(outcome.resultJson) as unknown };
      }
    }
  }
}

function failure(error: SandboxErrorInfo): Outcome {
  return { ok: false, ...EMPTY_OUTPUT, error };
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

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new SandboxOptionsError(`${name} must be a positive integer, not ${value}.`);
  return value;
}

function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new SandboxOptionsError(`${name} must be zero or a positive integer, not ${value}.`);
  return value;
}
