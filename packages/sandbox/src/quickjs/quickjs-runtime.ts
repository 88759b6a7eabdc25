import variant from "@jitl/quickjs-wasmfile-release-sync";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import type { RuntimeError, RuntimeHost, RuntimeOptions, RuntimeOutcome, RuntimeRequest, SandboxRuntime } from "../runtime.js";
import { FORMAT, PRELUDE } from "./prelude.js";

/** Guest stack; small enough that QuickJS reports overflow before V8's own stack under the WASM frames runs out. */
const MAX_STACK_BYTES = 256 * 1024;
const MAX_TIMERS = 1_000;
const MAX_PENDING_CALLS = 1_000;
/** Node's `WebAssembly.Memory`; the ES2023 library this repository compiles against does not describe it. */
const WasmMemory = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => object } })
  .WebAssembly.Memory;
const WASM_PAGE_BYTES = 64 * 1024;
/** Static data and the C stack of the QuickJS build (its default initial memory). */
const WASM_BASE_BYTES = 16 * 1024 * 1024;
/** Room for allocator overhead and fragmentation above the guest's own limit. */
const WASM_SLACK_BYTES = 16 * 1024 * 1024;

/**
 * Loads the QuickJS WebAssembly module once; every run gets a fresh runtime and context from it.
 * QuickJS's own memory limit counts blocks rather than bytes in this build (no malloc_usable_size),
 * so many allocations under it add up unchecked; a WebAssembly memory with a maximum is the real cap.
 */
export async function createQuickJSRuntime(options: RuntimeOptions): Promise<SandboxRuntime> {
  const maximumBytes = WASM_BASE_BYTES + options.memoryLimitBytes + WASM_SLACK_BYTES;
  const wasmMemory = new WasmMemory({
    initial: WASM_BASE_BYTES / WASM_PAGE_BYTES,
    maximum: Math.ceil(maximumBytes / WASM_PAGE_BYTES),
  });
  const module = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory }));
  return { run: (request, host) => new QuickJSRun(module, request, host).execute() };
}

interface Timer {
  callback: QuickJSHandle;
  handle: ReturnType<typeof setTimeout> | undefined;
}

class QuickJSRun {
  readonly #request: RuntimeRequest;
  readonly #host: RuntimeHost;
  readonly #runtime: QuickJSRuntime;
  readonly #vm: QuickJSContext;
  readonly #timers = new Map<number, Timer>();
  readonly #calls = new Set<QuickJSDeferredPromise>();
  #stringify: QuickJSHandle | undefined;
  #timerSeq = 0;
  /** An exception thrown by a timer callback; it ends the run like an uncaught exception in Node. */
  #timerError: QuickJSHandle | undefined;
  #wake: (() => void) | undefined;
  #settleError: unknown;
  #wakePending = false;
  #disposed = false;

  constructor(module: QuickJSWASMModule, request: RuntimeRequest, host: RuntimeHost) {
    this.#request = request;
    this.#host = host;
    this.#runtime = module.newRuntime();
    this.#runtime.setMemoryLimit(request.limits.memoryLimitBytes);
    this.#runtime.setMaxStackSize(MAX_STACK_BYTES);
    this.#runtime.setModuleLoader(() => ({ error: new Error("import() is not available in the sandbox") }));
    this.#vm = this.#runtime.newContext();
  }

  async execute(): Promise<RuntimeOutcome> {
    let outcome: RuntimeOutcome;
    try {
      outcome = await this.#evaluate();
    } catch (error) {
      outcome = hostFailure(error);
    }
    try {
      this.#dispose();
    } catch {
      // QuickJS aborts on a leaked object; the answer stands, but this WASM instance is spent.
      return { ...outcome, retire: true };
    }
    return outcome;
  }

  async #evaluate(): Promise<RuntimeOutcome> {
    if (this.#shouldStop()) return this.#stopped();
    // The prelude is ours and must run whole, so the interrupt handler comes after it.
    this.#installGlobals();
    this.#runtime.setInterruptHandler(() => this.#shouldStop());
    const evaluated = this.#vm.evalCode(this.#request.code, this.#request.filename, { type: "module" });
    if (evaluated.error) return this.#fail(evaluated.error);
    return this.#settle(evaluated.value);
  }

  #shouldStop(): boolean {
    return this.#host.isAborted() || Date.now() >= this.#request.deadline;
  }

  #installGlobals(): void {
    const vm = this.#vm;
    const json = vm.getProp(vm.global, "JSON");
    this.#stringify = vm.getProp(json, "stringify");
    json.dispose();
    const write = vm.newFunction("write", (stream, text) => {
      const name = vm.getString(stream) === "stderr" ? "stderr" : "stdout";
      return vm.newNumber(this.#host.write(name, vm.getString(text)));
    });
    const loadFormat = vm.newFunction("loadFormat", () => vm.unwrapResult(vm.evalCode(FORMAT, "format.js", { type: "global" })));
    const call = vm.newFunction("call", (name, args) => this.#call(vm.getString(name), vm.typeof(args) === "string" ? vm.getString(args) : undefined));
    const setTimer = vm.newFunction("setTimer", (callback, ms) => vm.newNumber(this.#setTimer(callback, vm.getNumber(ms))));
    const clearTimer = vm.newFunction("clearTimer", (id) => {
      this.#clearTimer(vm.getNumber(id));
    });
    const functions = [write, loadFormat, call, setTimer, clearTimer];
    try {
      const prelude = vm.unwrapResult(vm.evalCode(PRELUDE, "prelude.js", { type: "global" }));
      const installed = vm.callFunction(prelude, vm.undefined, ...functions);
      prelude.dispose();
      vm.unwrapResult(installed).dispose();
    } finally {
      for (const handle of functions) handle.dispose();
    }
  }

  #call(name: string, argsJson: string | undefined): QuickJSHandle {
    const vm = this.#vm;
    if (this.#calls.size >= MAX_PENDING_CALLS) {
      throw new RangeError(`Too many host calls in flight at once (limit ${MAX_PENDING_CALLS}).`);
    }
    const deferred = vm.newPromise();
    this.#calls.add(deferred);
    const settle = (answer: { ok: true; json: string | undefined } | { ok: false; message: string }) => {
      if (this.#disposed) return;
      this.#calls.delete(deferred);
      try {
        if (!answer.ok) vm.newError(answer.message).consume((error) => deferred.reject(error));
        else if (answer.json === undefined) deferred.resolve(vm.undefined);
        else vm.newString(answer.json).consume((value) => deferred.resolve(value));
      } catch (error) {
        // Settling fails only when the guest is out of memory or past its deadline; the loop reports that.
        this.#settleError ??= error;
      } finally {
        deferred.dispose();
        this.#wakeSoon();
      }
    };
    this.#host.call(name, argsJson).then(
      (json) => settle({ ok: true, json }),
      (error: unknown) => settle({ ok: false, message: error instanceof Error ? error.message : String(error) }),
    );
    return deferred.handle;
  }

  #setTimer(callback: QuickJSHandle, ms: number): number {
    if (this.#timers.size >= MAX_TIMERS) throw new RangeError(`Too many pending timers (limit ${MAX_TIMERS}).`);
    const id = ++this.#timerSeq;
    // A timer due after the deadline could never fire within the run, so none is scheduled.
    const due = Date.now() + ms < this.#request.deadline;
    const handle = due ? setTimeout(() => this.#fireTimer(id), ms) : undefined;
    this.#timers.set(id, { callback: callback.dup(), handle });
    return id;
  }

  #clearTimer(id: number): void {
    const timer = this.#timers.get(id);
    if (!timer) return;
    clearTimeout(timer.handle);
    timer.callback.dispose();
    this.#timers.delete(id);
  }

  #fireTimer(id: number): void {
    const timer = this.#timers.get(id);
    if (!timer || this.#disposed) return;
    this.#timers.delete(id);
    const result = this.#vm.callFunction(timer.callback, this.#vm.undefined);
    timer.callback.dispose();
    if (result.error) this.#timerError ??= result.error;
    else result.value.dispose();
    this.#wakeSoon();
  }

  /** Drives the module promise, then the default export, to a settled state. */
  async #settle(evaluated: QuickJSHandle): Promise<RuntimeOutcome> {
    const vm = this.#vm;
    let pending = evaluated;
    let namespace = true;
    for (;;) {
      if (this.#settleError !== undefined) {
        pending.dispose();
        const message = `A host call's answer could not be handed to the snippet: ${String(this.#settleError)}`;
        return { ok: false, error: { kind: this.#classify(undefined, message), message } };
      }
      const jobs = this.#runtime.executePendingJobs();
      if (jobs.error) {
        pending.dispose();
        return this.#fail(jobs.error);
      }
      if (this.#timerError) {
        pending.dispose();
        const error = this.#timerError;
        this.#timerError = undefined;
        return this.#fail(error);
      }
      const state = vm.getPromiseState(pending);
      if (state.type === "rejected") {
        pending.dispose();
        return this.#fail(state.error);
      }
      if (state.type === "fulfilled") {
        if (state.value !== pending) pending.dispose();
        if (namespace) {
          pending = vm.getProp(state.value, "default");
          state.value.dispose();
          namespace = false;
          continue;
        }
        return this.#serialize(state.value);
      }
      if (this.#shouldStop()) {
        pending.dispose();
        return this.#stopped();
      }
      if (this.#calls.size === 0 && this.#timers.size === 0) {
        pending.dispose();
        return {
          ok: false,
          error: {
            kind: "timeout",
            message: "The snippet awaits a promise that can never settle: no host call or timer is pending.",
          },
        };
      }
      await this.#nextEvent();
    }
  }

  /** Answers that arrive together settle together before the guest runs again (one microtask later, not one loop turn). */
  #wakeSoon(): void {
    if (this.#wakePending) return;
    this.#wakePending = true;
    queueMicrotask(() => {
      this.#wakePending = false;
      this.#wake?.();
    });
  }

  #nextEvent(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#host.signal.removeEventListener("abort", done);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, this.#request.deadline - Date.now()));
      this.#host.signal.addEventListener("abort", done);
      this.#wake = done;
    });
  }

  #serialize(value: QuickJSHandle): RuntimeOutcome {
    const vm = this.#vm;
    const type = vm.typeof(value);
    if (type === "function" || type === "symbol") {
      value.dispose();
      return { ok: false, error: { kind: "result", message: `The default export is a ${type}, which has no JSON form.` } };
    }
    const json = vm.callFunction(this.#stringify as QuickJSHandle, vm.undefined, value);
    value.dispose();
    if (json.error) {
      const error = this.#describe(json.error);
      return { ok: false, error: { kind: "result", message: `The default export cannot be turned into JSON: ${error.message}` } };
    }
    return json.value.consume((text): RuntimeOutcome => {
      if (vm.typeof(text) !== "string") return { ok: true, resultJson: undefined };
      const length = vm.getProp(text, "length").consume((h) => vm.getNumber(h));
      // UTF-16 length never exceeds the UTF-8 size, so a long string is too big without copying it out.
      if (length > this.#request.limits.maxResultBytes) return tooBig(this.#request.limits.maxResultBytes);
      const resultJson = vm.getString(text);
      if (Buffer.byteLength(resultJson) > this.#request.limits.maxResultBytes) return tooBig(this.#request.limits.maxResultBytes);
      return { ok: true, resultJson };
    });
  }

  #stopped(): RuntimeOutcome {
    const kind = this.#host.isAborted() ? "aborted" : "timeout";
    return { ok: false, error: { kind, name: "InternalError", message: "interrupted" } };
  }

  #fail(handle: QuickJSHandle): RuntimeOutcome {
    const error = this.#describe(handle);
    return { ok: false, error };
  }

  /** Reads an exception; the guest may have thrown anything, including objects with hostile getters. */
  #describe(handle: QuickJSHandle): RuntimeError {
    const vm = this.#vm;
    try {
      const read = (key: string): string | undefined => {
        const property = vm.getProp(handle, key);
        try {
          return vm.typeof(property) === "string" ? vm.getString(property) : undefined;
        } finally {
          property.dispose();
        }
      };
      const isObject = vm.typeof(handle) === "object";
      const name = isObject ? read("name") : undefined;
      const message = isObject ? (read("message") ?? "") : String(vm.dump(handle));
      const stack = isObject ? read("stack") : undefined;
      return { kind: this.#classify(name, message), name, message, stack };
    } catch {
      return { kind: this.#classify(undefined, ""), message: "The snippet threw a value that cannot be read." };
    } finally {
      handle.dispose();
    }
  }

  #classify(name: string | undefined, message: string): RuntimeError["kind"] {
    if (this.#host.isAborted()) return "aborted";
    if (name === "InternalError" && message === "interrupted") return "timeout";
    if (Date.now() >= this.#request.deadline) return "timeout";
    if (message === "out of memory") return "memory";
    if (message === "stack overflow" || (name === "RangeError" && /call stack/i.test(message))) return "stack_overflow";
    return "runtime";
  }

  #dispose(): void {
    this.#disposed = true;
    for (const timer of this.#timers.values()) {
      clearTimeout(timer.handle);
      timer.callback.dispose();
    }
    this.#timers.clear();
    for (const deferred of this.#calls) deferred.dispose();
    this.#calls.clear();
    this.#timerError?.dispose();
    this.#stringify?.dispose();
    this.#vm.dispose();
    this.#runtime.dispose();
  }
}

function tooBig(limit: number): RuntimeOutcome {
  return { ok: false, error: { kind: "result", message: `The default export's JSON is larger than the ${limit}-byte limit.` } };
}

/** The engine itself failed (V8 stack exhausted under the WASM frames, WASM trap); its state cannot be trusted. */
function hostFailure(error: unknown): RuntimeOutcome {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RangeError && /call stack/i.test(message)) {
    return { ok: false, retire: true, error: { kind: "stack_overflow", message: "Maximum call stack size exceeded." } };
  }
  return { ok: false, retire: true, error: { kind: "internal", message: `The sandbox engine failed: ${message}` } };
}
