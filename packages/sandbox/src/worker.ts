import { parentPort, workerData } from "node:worker_threads";
import { OutputBuffer } from "./output-buffer.js";
import type { CallAnswer, CallRequest, FromWorker, ToWorker, WorkerData } from "./protocol.js";
import { createQuickJSRuntime } from "./quickjs/quickjs-runtime.js";
import type { RuntimeHost, RuntimeOptions, RuntimeOutcome, SandboxRuntime } from "./runtime.js";
import { stripTypes, warmUpStripTypes } from "./transform.js";

const port = parentPort;
if (!port) throw new Error("The sandbox worker must run in a worker thread.");
const data = workerData as WorkerData;
const abortFlag = new Int32Array(data.abortFlag);
const runtime: Promise<SandboxRuntime> = data.runtimeModule ? loadRuntime(data.runtimeModule, data.runtimeOptions) : createQuickJSRuntime(data.runtimeOptions);
const calls = new Map<number, (answer: CallAnswer) => void>();
/** Answer characters handed to each run's guest and not yet reported to the host. */
const taken = new Map<number, number>();
const aborts = new Map<number, AbortController>();
let callSeq = 0;

const send = (message: FromWorker) => port.postMessage(message);
let warmed = false;
const announceReady = async () => {
  await (await runtime).ready?.();
  // sucrase runs once per run here: its first strips cost ~1 ms each until V8 has optimized it, so a
  // new worker strips a typical snippet 30 times first (one more after each engine build delayed
  // back-to-back runs more than it sped up their strips).
  if (!data.runtimeModule && !warmed) warmUpStripTypes(30);
  warmed = true;
  send({ type: "ready" });
};
void announceReady().catch(() => undefined);

port.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "run":
      void run(message);
      break;
    case "answers": {
      let bytes = 0;
      for (const answer of message.answers) {
        const settle = calls.get(answer.callId);
        if (!settle) continue;
        if (answer.ok && answer.json !== undefined) bytes += answer.json.length;
        settle(answer);
      }
      if (taken.has(message.runId)) taken.set(message.runId, (taken.get(message.runId) ?? 0) + bytes);
      break;
    }
    case "abort":
      aborts.get(message.runId)?.abort();
      break;
  }
});

async function run(request: Extract<ToWorker, { type: "run" }>): Promise<void> {
  const { runId } = request;
  const controller = new AbortController();
  aborts.set(runId, controller);
  taken.set(runId, 0);
  let outbox: CallRequest[] = [];
  // Calls still unanswered when the run ends (it timed out, or was aborted) are never answered: drop them then.
  const pending = new Set<number>();
  const output = { stdout: new OutputBuffer(request.maxOutputBytes), stderr: new OutputBuffer(request.maxOutputBytes) };
  const host: RuntimeHost = {
    call(name, json) {
      const callId = ++callSeq;
      pending.add(callId);
      return new Promise((resolve, reject) => {
        calls.set(callId, (answer) => {
          calls.delete(callId);
          pending.delete(callId);
          if (answer.ok) resolve(answer.json);
          else reject(new Error(answer.message));
        });
        if (outbox.length === 0) {
          // Every call the guest makes before it yields leaves in one message.
          queueMicrotask(() => {
            send({ type: "calls", runId, calls: outbox, taken: taken.get(runId) ?? 0 });
            taken.set(runId, 0);
            outbox = [];
          });
        }
        outbox.push({ callId, name, json });
      });
    },
    write: (stream, text) => output[stream].write(text),
    isAborted: () => controller.signal.aborted || Atomics.load(abortFlag, 0) === runId,
    signal: controller.signal,
  };
  let outcome: RuntimeOutcome | undefined;
  let entry: { map?: string; code?: string } | undefined;
  try {
    let code = request.code;
    if (request.modules) {
      try {
        code = stripTypes(request.code, request.filename).code;
      } catch (error) {
        // esbuild reports it, with its position.
        code = "";
        outcome = { ok: false, unlinked: true, error: { kind: "syntax", message: String(error).slice(0, 200) } };
      }
      if (request.wantCompiled) entry = { code };
    }
    outcome ??= await (await runtime).run(code === request.code ? request : { ...request, code }, host);
    // Positions in an error's stack are in the stripped code: the map back costs one more pass, paid only then.
    if (request.modules && (request.wantCompiled || (!outcome.ok && !outcome.unlinked && outcome.error.stack))) {
      try {
        entry = { ...entry, map: stripTypes(request.code, request.filename, { map: true }).map };
      } catch {
        // Without the map, lines are still right (sucrase keeps them); only columns may be off.
      }
    }
  } catch (error) {
    outcome = { ok: false, retire: true, error: { kind: "internal", message: `The sandbox engine failed: ${String(error)}` } };
  }
  aborts.delete(runId);
  taken.delete(runId);
  for (const callId of pending) calls.delete(callId);
  send({
    type: "done",
    runId,
    outcome,
    ...(entry ? { entry } : {}),
    output: {
      stdout: output.stdout.text(),
      stderr: output.stderr.text(),
      stdoutTruncated: output.stdout.truncated,
      stderrTruncated: output.stderr.truncated,
    },
  });
  void announceReady().catch(() => undefined);
}

async function loadRuntime(specifier: string, options: RuntimeOptions): Promise<SandboxRuntime> {
  const module = (await import(specifier)) as { createRuntime?: (options: RuntimeOptions) => SandboxRuntime | Promise<SandboxRuntime> };
  if (typeof module.createRuntime !== "function") throw new Error(`${specifier} does not export createRuntime().`);
  return module.createRuntime(options);
}
