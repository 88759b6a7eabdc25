import { Worker } from "node:worker_threads";
import { MAX_ERROR_MESSAGE_LENGTH, WORKER_GRACE_MS } from "./defaults.js";
import type { CallAnswer, CapturedOutput, FromWorker, ToWorker, WorkerData } from "./protocol.js";
import type { RuntimeOptions, RuntimeOutcome } from "./runtime.js";

export type RunJob = Extract<ToWorker, { type: "run" }>;

/** Answers a guest host call with the JSON of the result. */
export type CallHandler = (name: string, json: string | undefined) => Promise<string | undefined>;

export type WorkerReply =
  | { type: "done"; outcome: RuntimeOutcome; output: CapturedOutput; entry?: { map?: string; code?: string } }
  | { type: "crashed"; message: string }
  | { type: "killed"; reason: "timeout" | "aborted" };

interface ActiveRun {
  runId: number;
  onCall: CallHandler;
  onTaken?: (chars: number) => void;
  finish: (reply: WorkerReply) => void;
}

/** One worker thread running one job at a time; terminated when it stops answering. */
export class PooledWorker {
  readonly #worker: Worker;
  readonly #abortFlag = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  readonly #onDeath: (worker: PooledWorker) => void;
  #active: ActiveRun | undefined;
  #answers: CallAnswer[] = [];
  #dead = false;
  /** The worker said its next run would not wait for an engine; false from the start of a run until it says so again. */
  #ready = false;
  #started = false;
  readonly #onReady: () => void;

  constructor(options: { url: URL; runtimeModule?: string; runtimeOptions: RuntimeOptions; onDeath: (worker: PooledWorker) => void; onReady: () => void }) {
    this.#onDeath = options.onDeath;
    this.#onReady = options.onReady;
    const workerData: WorkerData = {
      abortFlag: this.#abortFlag.buffer as SharedArrayBuffer,
      runtimeModule: options.runtimeModule,
      runtimeOptions: options.runtimeOptions,
    };
    // V8 stack room above QuickJS's own stack limit, so guest recursion ends as a guest error.
    this.#worker = new Worker(options.url, { workerData, resourceLimits: { stackSizeMb: 8 } });
    this.#worker.unref();
    this.#worker.on("message", (message: FromWorker) => this.#onMessage(message));
    this.#worker.on("error", (error) => this.#die(`The sandbox worker failed: ${error.message}`));
    this.#worker.on("exit", (code) => this.#die(`The sandbox worker exited with code ${code}.`));
  }

  get dead(): boolean {
    return this.#dead;
  }

  get ready(): boolean {
    return this.#ready && !this.#dead;
  }

  /** It has finished starting (a worker still starting takes far longer to be ready than one preparing its next engine). */
  get started(): boolean {
    return this.#started;
  }

  /** Runs a job; the reply comes by `hardDeadline` plus a grace period whatever the guest does. */
  run(job: RunJob, options: { onCall: CallHandler; onTaken?: (chars: number) => void; hardDeadline: number; signal?: AbortSignal }): Promise<WorkerReply> {
    return new Promise((resolve) => {
      let graceTimer: ReturnType<typeof setTimeout> | undefined;
      const watchdog = setTimeout(() => this.#kill("timeout"), Math.max(0, options.hardDeadline - Date.now()) + WORKER_GRACE_MS);
      const onAbort = () => {
        // The shared flag reaches a guest stuck in a loop, the message one waiting on events.
        Atomics.store(this.#abortFlag, 0, job.runId);
        this.#post({ type: "abort", runId: job.runId });
        graceTimer = setTimeout(() => this.#kill("aborted"), WORKER_GRACE_MS);
      };
      this.#active = {
        runId: job.runId,
        onCall: options.onCall,
        onTaken: options.onTaken,
        finish: (reply) => {
          clearTimeout(watchdog);
          clearTimeout(graceTimer);
          options.signal?.removeEventListener("abort", onAbort);
          this.#active = undefined;
          if (!this.#dead) this.#worker.unref();
          resolve(reply);
        },
      };
      this.#worker.ref();
      this.#ready = false;
      this.#post(job);
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Stops the thread; a run in progress is reported as crashed. */
  async terminate(): Promise<void> {
    this.#dead = true;
    await this.#worker.terminate();
  }

  #onMessage(message: FromWorker): void {
    if (message.type === "ready") {
      this.#started = true;
      this.#ready = !this.#active;
      if (this.#ready) this.#onReady();
      return;
    }
    const active = this.#active;
    if (!active || message.runId !== active.runId) return;
    if (message.type === "done") {
      if (message.outcome.retire) this.#retire();
      active.finish({ type: "done", outcome: message.outcome, output: message.output, ...(message.entry ? { entry: message.entry } : {}) });
      return;
    }
    if (message.taken > 0) active.onTaken?.(message.taken);
    for (const { callId, name, json } of message.calls) {
      active.onCall(name, json).then(
        (answer) => this.#answer(active.runId, { callId, ok: true, json: answer }),
        (error: unknown) => this.#answer(active.runId, { callId, ok: false, message: errorMessage(error) }),
      );
    }
  }

  /** Answers settled together (before the next task) go back in one message; a microtask, not setImmediate, keeps chained calls fast. */
  #answer(runId: number, answer: CallAnswer): void {
    if (this.#active?.runId !== runId) return;
    if (this.#answers.length === 0) {
      queueMicrotask(() => {
        const answers = this.#answers;
        this.#answers = [];
        if (this.#active?.runId === runId) this.#post({ type: "answers", runId, answers });
      });
    }
    this.#answers.push(answer);
  }

  #post(message: ToWorker): void {
    if (!this.#dead) this.#worker.postMessage(message);
  }

  #kill(reason: "timeout" | "aborted"): void {
    const active = this.#active;
    this.#retire();
    active?.finish({ type: "killed", reason });
  }

  #retire(): void {
    if (this.#dead) return;
    this.#dead = true;
    void this.#worker.terminate();
    this.#onDeath(this);
  }

  #die(message: string): void {
    const active = this.#active;
    const wasDead = this.#dead;
    this.#dead = true;
    active?.finish({ type: "crashed", message });
    if (!wasDead) this.#onDeath(this);
  }
}

/** A host call's failure as the guest sees it; a downstream error text of any size is cut. */
function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > MAX_ERROR_MESSAGE_LENGTH ? `${message.slice(0, MAX_ERROR_MESSAGE_LENGTH)}…` : message;
}
