import type { ModuleSet, RuntimeLimits, RuntimeOptions, RuntimeOutcome } from "./runtime.js";

/** Data every sandbox worker starts with. */
export interface WorkerData {
  /** Int32 slot the main thread sets to a run id to cancel that run, even while it is busy. */
  abortFlag: SharedArrayBuffer;
  runtimeModule?: string;
  runtimeOptions: RuntimeOptions;
}

export interface CallRequest {
  callId: number;
  name: string;
  json: string | undefined;
}

export type CallAnswer = { callId: number; ok: true; json: string | undefined } | { callId: number; ok: false; message: string };

// Calls and answers travel in batches: a Promise.all of a hundred calls costs two messages, not two hundred.
export type ToWorker =
  | {
      type: "run";
      runId: number;
      code: string;
      filename: string;
      deadline: number;
      limits: RuntimeLimits;
      maxOutputBytes: number;
      /** The fast path: `code` is the snippet's TypeScript, stripped in the worker, and these are its modules. */
      modules?: ModuleSet;
      /** Send the stripped snippet back (the caller keeps bundles for debugging). */
      wantCompiled?: boolean;
    }
  | { type: "answers"; runId: number; answers: CallAnswer[] }
  | { type: "abort"; runId: number };

export interface CapturedOutput {
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

export type FromWorker =
  /** `taken`: characters of answer JSON handed to the guest since the last message, so the host can stop counting them. */
  | { type: "calls"; runId: number; calls: CallRequest[]; taken: number }
  | {
      type: "done";
      runId: number;
      outcome: RuntimeOutcome;
      output: CapturedOutput;
      /** Fast path: the stripped snippet's source map, sent when an error needs its positions, and the code when asked for. */
      entry?: { map?: string; code?: string };
    }
  /** The next run can start without waiting for the engine; sent at start-up and after each run. */
  | { type: "ready" };
