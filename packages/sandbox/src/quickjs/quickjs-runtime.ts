import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import variant from "@jitl/quickjs-wasmfile-release-sync";
import { type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import {
  DEFAULT_MAX_CALL_ARGS_BYTES,
  DEFAULT_MAX_RESULT_DEPTH,
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_ERROR_STACK_LENGTH,
  MAX_PENDING_CALLS,
  MAX_STACK_BYTES,
  MAX_TIMERS,
} from "../defaults.js";
import { formatBytes } from "../output-buffer.js";
import type { RuntimeError, RuntimeHost, RuntimeOptions, RuntimeOutcome, RuntimeRequest, SandboxRuntime } from "../runtime.js";
import { LIBS } from "./libs.js";
import { CONSOLE, FORMAT, PRELUDE, SERIALIZE_TOO_DEEP, TIMERS } from "./prelude.js";

/** Node's WebAssembly API; the ES2023 library this repository compiles against does not describe it. */
/** Interrupt ticks (each some ten thousand bytecode operations, about a millisecond here) a fast-path run may spend before it throws and still be run again through esbuild for esbuild's message. */
const MAX_REDO_TICKS = 200;

export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
const Wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
      compile: (bytes: Uint8Array) => Promise<object>;
      Instance: new (module: object, imports: object) => { exports: object };
    };
  }
).WebAssembly;
const WASM_PAGE_BYTES = 64 * 1024;
/** Static data and the C stack of the QuickJS build (its default initial memory). */
const WASM_BASE_BYTES = 16 * 1024 * 1024;
/** Room for allocator overhead and fragmentation above the guest's own limit. */
const WASM_SLACK_BYTES = 16 * 1024 * 1024;
/** Time guest getters get to answer while an error is read after the run stopped. */
const DESCRIBE_BUDGET_MS = 50;
/** Time preloaded modules get to build in an engine; past it they are dropped (they are trusted, so this only guards against a mistake). */
const PRELOAD_BUDGET_MS = 1_000;
/** Scripts of the engine itself that the guest compiles on first use. */
const ENGINE_SOURCES: Record<string, string> = { format: FORMAT, console: CONSOLE, timers: TIMERS };

/** Test hooks: each memory an engine is built on, seen just before its instance is created. */
export interface QuickJSRuntimeHooks {
  beforeInstantiate?(memory: WasmMemory, reused: boolean): void;
  /** A run's module is compiled from its source (not found already built in the engine). */
  onLoad?(name: string): void;
  /** The clock deadlines are read on, in epoch milliseconds; Date.now when absent. */
  now?(): number;
}

/**
 * Makes a used memory as good as a new one: every byte zero, at its base size. A memory that grew
 * is not reused (a new one is smaller); returns false then, and the caller allocates.
 */
export function wipeMemory(memory: WasmMemory): boolean {
  if (memory.buffer.byteLength !== WASM_BASE_BYTES) return false;
  new Uint8Array(memory.buffer).fill(0);
  return true;
}

/**
 * Every run gets a fresh QuickJS WebAssembly instance on memory that holds nothing of an earlier
 * run: the last run's memory, all of it zeroed (cheaper than a new one, whose pages the kernel
 * zeroes on first touch and V8 collects later), or a new memory when the last one grew. So nothing
 * one run leaves in memory (even through an engine bug that reads past a buffer) is there for the next.
 * The module is compiled once; the next instance is built in the background after each run, so
 * a run does not wait for it. QuickJS's own memory limit counts blocks rather than bytes in this
 * build (no malloc_usable_size), so the memory's maximum is the real cap.
 */
export async function createQuickJSRuntime(options: RuntimeOptions, hooks: QuickJSRuntimeHooks = {}): Promise<SandboxRuntime> {
  const wasmPath = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
  const [wasmModule, loaderImport, FFI] = await Promise.all([
    readFile(wasmPath).then((bytes) => Wasm.compile(bytes)),
    variant.importModuleLoader(),
    variant.importFFI(),
  ]);
  const loadEmscripten = (typeof loaderImport === "function" ? loaderImport : loaderImport.default) as unknown as (options: object) => Promise<object>;
  const newModule = QuickJSWASMModule as unknown as new (module: unknown, ffi: unknown) => QuickJSWASMModule;
  const maximumBytes = WASM_BASE_BYTES + options.memoryLimitBytes + WASM_SLACK_BYTES;
  /** The finished run's memory; its instance is never called again once the run has returned. */
  let used: WasmMemory | undefined;
  /** Modules built into each engine before its run; dropped for good when one fails to build (it would fail in every engine). */
  let preload = options.preload && Object.keys(options.preload).length > 0 ? options.preload : undefined;
  const fresh = async (withPreload = true): Promise<QuickJSRun> => {
    const previous = used;
    used = undefined;
    const reused = previous !== undefined && wipeMemory(previous);
    const wasmMemory = reused ? previous : new Wasm.Memory({ initial: WASM_BASE_BYTES / WASM_PAGE_BYTES, maximum: Math.ceil(maximumBytes / WASM_PAGE_BYTES) });
    hooks.beforeInstantiate?.(wasmMemory, reused);
    // What newQuickJSWASMModuleFromVariant does, without its three dynamic imports and option wrapping per engine.
    const instantiateWasm = (imports: object, done: (instance: object) => void) => {
      const instance = new Wasm.Instance(wasmModule, imports);
      done(instance);
      return instance.exports;
    };
    const emscripten = await loadEmscripten({ wasmMemory, instantiateWasm });
    (emscripten as { type?: string }).type = "sync";
    const module = new newModule(emscripten, new FFI(emscripten as ConstructorParameters<typeof FFI>[0]));
    const engine = new QuickJSRun(module, {
      memoryLimitBytes: options.memoryLimitBytes,
      memory: wasmMemory,
      preload: withPreload ? preload : undefined,
      hooks,
    });
    if (engine.preloadFailed) preload = undefined;
    return engine;
  };
  const prepare = () => {
    const prepared = fresh();
    prepared.catch(() => undefined);
    return prepared;
  };
  let next: Promise<QuickJSRun> | undefined = prepare();
  return {
    async run(request, host) {
      let engine = await (next ?? prepare());
      next = undefined;
      if (!engine.canLink(request)) {
        // The run brings another source for a preloaded module (or that module failed to build): an engine without preloads.
        used = engine.memory;
        engine = await fresh(false);
      }
      try {
        return await engine.execute(request, host);
      } finally {
        // An engine that failed (a WASM trap) gives its memory back too: it is zeroed all the same.
        used = engine.memory;
        // After the worker has posted this run's answer, not before.
        setImmediate(() => {
          next ??= prepare();
        });
      }
    },
    async ready() {
      await new Promise((resolve) => setImmediate(resolve));
      await (next ??= prepare()).catch(() => undefined);
    },
  };
}

interface Timer {
  callback: QuickJSHandle;
  handle: ReturnType<typeof setTimeout> | undefined;
  /** Milliseconds between firings of an interval; undefined for a one-shot timer. */
  every: number | undefined;
}

class QuickJSRun {
  /** Set when the run starts; the engine is built (and its prelude installed) before that, in the background. */
  #request!: RuntimeRequest;
  #host!: RuntimeHost;
  readonly #runtime: QuickJSRuntime;
  readonly #vm: QuickJSContext;
  readonly #timers = new Map<number, Timer>();
  /** Calls the host has not answered yet, and answers not yet handed to the guest. */
  #inFlight = 0;
  #answers: string[] = [];
  /** The prelude's deliver(answersJson). */
  #deliverFn: QuickJSHandle | undefined;
  /** Natives captured before the guest runs, so a guest that replaces them changes nothing here. */
  #stringify: QuickJSHandle | undefined;
  #slice: QuickJSHandle | undefined;
  /** The prelude's function that compiles (once) and returns the result serializer. */
  #serializerGetter: QuickJSHandle | undefined;
  #serializer: QuickJSHandle | undefined;
  #timerSeq = 0;
  /** An exception thrown by a timer or microtask callback; it ends the run like an uncaught exception in Node. */
  #timerError: QuickJSHandle | undefined;
  #wake: (() => void) | undefined;
  /** Set while the run's deadline timer and abort listener are armed; stops them. */
  #watching: (() => void) | undefined;
  #settleError: unknown;
  #wakePending = false;
  #disposed = false;
  /** The interrupt handler stops the guest at this time; moved after the run to bound reading its error. */
  #stopAt: number;
  /** Milliseconds the guest has computed in this run, the stretch it is in now excluded. */
  #cpuUsed = 0;
  /** When the guest's current stretch of computing began; undefined while it waits. */
  #cpuFrom: number | undefined;
  /** Off while the run's error is read (under its own short budget). */
  #cpuCounted = true;
  /** The CPU budget, not the deadline, stopped the guest. */
  #cpuStopped = false;
  /** True only inside the evalCode that links the run's modules. */
  #linking = false;
  /** Calls of the interrupt handler during that evalCode: QuickJS calls it every so many bytecode operations, so this counts work done, whatever the clock says. */
  #linkTicks = 0;
  /** The guest wrote to the console: it ran, and did something a second run would repeat. */
  #wrote = false;
  /** Modules built (compiled and evaluated) into this engine before its run, by name: their JavaScript. */
  readonly #preloaded: Record<string, string> | undefined;
  /** One of them failed to build; the engine cannot serve a run that imports any of them. */
  readonly preloadFailed: boolean;
  readonly #hooks: QuickJSRuntimeHooks;
  readonly #now: () => number;
  readonly memory: WasmMemory;

  constructor(
    module: QuickJSWASMModule,
    options: { memoryLimitBytes: number; memory: WasmMemory; preload: Record<string, string> | undefined; hooks: QuickJSRuntimeHooks },
  ) {
    this.memory = options.memory;
    this.#hooks = options.hooks;
    this.#now = options.hooks.now ?? Date.now;
    this.#stopAt = Number.POSITIVE_INFINITY;
    this.#runtime = module.newRuntime();
    this.#runtime.setMemoryLimit(options.memoryLimitBytes);
    this.#runtime.setMaxStackSize(MAX_STACK_BYTES);
    // Modules are served only while the run's modules link (inside evalCode); a later import() finds nothing.
    this.#runtime.setModuleLoader(
      (name) => this.#load(name) ?? { error: new Error("import() is not available in the sandbox") },
      (base, requested) => this.#normalize(base, requested) ?? { error: new Error("import() is not available in the sandbox") },
    );
    this.#vm = this.#runtime.newContext();
    // The prelude is ours and must run whole, so it runs before any interrupt handler exists.
    this.#installGlobals();
    this.#preloaded = options.preload;
    this.preloadFailed = options.preload !== undefined && !this.#preload(options.preload);
  }

  /**
   * Whether this engine can run the request: every preloaded module the run links is the very code
   * it brings (QuickJS links an import to a module of that name already built, without asking the loader).
   */
  canLink(request: RuntimeRequest): boolean {
    const preloaded = this.#preloaded;
    const sources = request.modules?.sources;
    if (!preloaded || !sources) return true;
    for (const name of Object.keys(preloaded)) {
      if (Object.hasOwn(sources, name) && (this.preloadFailed || sources[name] !== preloaded[name])) return false;
    }
    return true;
  }

  /**
   * Compiles and evaluates trusted modules (no side effects, no imports) before the run, in the
   * background, so a run that imports them finds them built. False when one fails to build.
   */
  #preload(modules: Record<string, string>): boolean {
    const vm = this.#vm;
    const until = this.#now() + PRELOAD_BUDGET_MS;
    this.#runtime.setInterruptHandler(() => this.#now() > until);
    try {
      for (const [name, code] of Object.entries(modules)) {
        const evaluated = vm.evalCode(code, name, { type: "module" });
        if (evaluated.error) {
          evaluated.error.dispose();
          return false;
        }
        // A module with top-level await would still be pending: not preloadable.
        const state = vm.getPromiseState(evaluated.value);
        if (state.type === "rejected") state.error.dispose();
        if (state.type === "fulfilled" && state.value !== evaluated.value) state.value.dispose();
        evaluated.value.dispose();
        if (state.type !== "fulfilled") return false;
      }
      return true;
    } finally {
      this.#runtime.removeInterruptHandler();
      // What the modules wrote before the run is no sign that the run's code ran.
      this.#wrote = false;
    }
  }

  async execute(request: RuntimeRequest, host: RuntimeHost): Promise<RuntimeOutcome> {
    this.#request = request;
    this.#host = host;
    this.#stopAt = request.deadline;
    let outcome: RuntimeOutcome;
    try {
      outcome = await this.#evaluate();
    } catch (error) {
      outcome = hostFailure(error);
    }
    // The instance is thrown away whole, so the guest's objects need no freeing one by one; only host timers do.
    this.#disposed = true;
    this.#watching?.();
    for (const timer of this.#timers.values()) clearTimeout(timer.handle);
    this.#timers.clear();
    this.#answers = [];
    return outcome;
  }

  async #evaluate(): Promise<RuntimeOutcome> {
    if (this.#shouldStop()) return this.#stopped();
    this.#cpuFrom = this.#now();
    this.#runtime.setMemoryLimit(this.#request.limits.memoryLimitBytes);
    this.#runtime.setInterruptHandler(() => {
      if (this.#linking) this.#linkTicks++;
      return this.#shouldStop();
    });
    if (this.#request.modules) return this.#evaluateModules();
    const evaluated = this.#vm.evalCode(this.#request.code, this.#request.filename, { type: "module" });
    if (evaluated.error) return this.#fail(evaluated.error);
    return this.#settle(evaluated.value, 1);
  }

  /**
   * The snippet, with its modules linked by QuickJS. A failure out of evalCode is either the code's
   * (it did not compile or link: nothing ran) or a throw in a module's first synchronous stretch.
   * Either way no call has left yet (calls leave when the guest yields); unless the guest wrote to
   * the console, running it again through esbuild repeats nothing anyone saw, so the host may, as
   * long as the guest did little work before it threw (counted in interrupt ticks, not by the clock,
   * so a loaded machine gives the same answer): a snippet that computed a while keeps its own error.
   */
  #evaluateModules(): Promise<RuntimeOutcome> | RuntimeOutcome {
    this.#linking = true;
    let evaluated: ReturnType<QuickJSContext["evalCode"]>;
    try {
      evaluated = this.#vm.evalCode(this.#request.code, this.#request.filename, { type: "module" });
    } finally {
      this.#linking = false;
    }
    if (evaluated.error) {
      const unlinked = !this.#wrote && !this.#shouldStop() && this.#linkTicks <= MAX_REDO_TICKS;
      const outcome = this.#fail(evaluated.error);
      return unlinked ? { ...outcome, unlinked } : outcome;
    }
    return this.#settle(evaluated.value, 1);
  }

  #load(name: string): string | undefined {
    const modules = this.#request?.modules;
    if (!this.#linking || !modules) return undefined;
    if (!Object.hasOwn(modules.sources, name)) return undefined;
    this.#hooks.onLoad?.(name);
    return modules.sources[name];
  }

  #normalize(base: string, requested: string): string | undefined {
    const modules = this.#request?.modules;
    if (!this.#linking || !modules) return undefined;
    const key = `${base}\n${requested}`;
    return Object.hasOwn(modules.links, key) ? modules.links[key] : undefined;
  }

  #shouldStop(): boolean {
    return this.#host.isAborted() || this.#now() >= this.#stopAt || this.#overCpu();
  }

  /** The guest computed past its CPU budget (a background snippet waits long, but computes no longer than a foreground one). */
  #overCpu(): boolean {
    const budget = this.#request.limits.cpuMs;
    if (budget === undefined || !this.#cpuCounted) return false;
    const stretch = this.#cpuFrom === undefined ? 0 : this.#now() - this.#cpuFrom;
    if (this.#cpuUsed + stretch < budget) return false;
    this.#cpuStopped = true;
    return true;
  }

  /** The guest stops computing (it waits for an event) or starts again. */
  #pauseCpu(): void {
    if (this.#cpuFrom !== undefined) this.#cpuUsed += this.#now() - this.#cpuFrom;
    this.#cpuFrom = undefined;
  }

  #resumeCpu(): void {
    this.#cpuFrom ??= this.#now();
  }

  #installGlobals(): void {
    const vm = this.#vm;
    const json = vm.getProp(vm.global, "JSON");
    this.#stringify = vm.getProp(json, "stringify");
    json.dispose();
    const stringClass = vm.getProp(vm.global, "String");
    const stringPrototype = vm.getProp(stringClass, "prototype");
    this.#slice = vm.getProp(stringPrototype, "slice");
    stringPrototype.dispose();
    stringClass.dispose();
    // Strings come from the prelude as JSON text: the engine hands strings out as C strings, which end at a NUL.
    const write = vm.newFunction("write", (toStderr, text) => {
      this.#wrote = true;
      const stream = vm.dump(toStderr) === true ? "stderr" : "stdout";
      return vm.newNumber(this.#host.write(stream, JSON.parse(vm.getString(text)) as string));
    });
    const loadLib = vm.newFunction("loadLib", (name) => {
      const lib = vm.getString(name);
      const source = ENGINE_SOURCES[lib] ?? LIBS[lib];
      if (source === undefined) throw new Error(`No library "${lib}".`);
      // The console and timers are parts of the prelude compiled late, and are named as it is in stack frames.
      const filename = lib === "console" || lib === "timers" ? "prelude.js" : `${lib}.js`;
      return vm.unwrapResult(vm.evalCode(source, filename, { type: "global" }));
    });
    const call = vm.newFunction("call", (batch) => {
      this.#calls(batch);
    });
    const setTimer = vm.newFunction("setTimer", (callback, ms, repeat) => vm.newNumber(this.#setTimer(callback, vm.getNumber(ms), vm.dump(repeat) === true)));
    const clearTimer = vm.newFunction("clearTimer", (id) => {
      this.#clearTimer(vm.getNumber(id));
    });
    const fail = vm.newFunction("fail", (error) => {
      this.#timerError ??= error.dup();
      this.#wakeSoon();
    });
    const functions = [write, loadLib, call, setTimer, clearTimer, fail];
    try {
      const prelude = vm.unwrapResult(vm.evalCode(PRELUDE, "prelude.js", { type: "global" }));
      const installed = vm.callFunction(prelude, vm.undefined, ...functions);
      prelude.dispose();
      const exported = vm.unwrapResult(installed);
      this.#serializerGetter = vm.getProp(exported, 0);
      this.#deliverFn = vm.getProp(exported, 1);
      exported.dispose();
    } finally {
      for (const handle of functions) handle.dispose();
    }
  }

  /**
   * The guest's calls made since it last yielded, one per line: `id\tnameJson[\targsJson]`. Each
   * is answered later through deliver(), a refusal (too many in flight, arguments too large) too.
   */
  #calls(batchHandle: QuickJSHandle): void {
    const batch = this.#vm.getString(batchHandle);
    const limit = this.#request.limits.maxCallArgsBytes ?? DEFAULT_MAX_CALL_ARGS_BYTES;
    // Refusals carry their message as JSON text, so it reaches the guest whole.
    const refuse = (id: number, message: string) => this.#answer(`[${id},0,${JSON.stringify(message)}]`);
    for (let start = 0; start < batch.length; ) {
      const newline = batch.indexOf("\n", start);
      const end = newline === -1 ? batch.length : newline;
      const line = batch.slice(start, end);
      start = end + 1;
      const idEnd = line.indexOf("\t");
      const nameEnd = line.indexOf("\t", idEnd + 1);
      const id = Number(line.slice(0, idEnd));
      const name = idEnd === -1 ? undefined : parseJson(line.slice(idEnd + 1, nameEnd === -1 ? line.length : nameEnd));
      const argsJson = idEnd === -1 || nameEnd === -1 ? undefined : line.slice(nameEnd + 1);
      // The prelude writes these lines; anything else is not a call.
      if (!Number.isSafeInteger(id) || typeof name !== "string") continue;
      this.#inFlight++;
      if (this.#inFlight > MAX_PENDING_CALLS) {
        refuse(id, `Too many host calls in flight at once (limit ${MAX_PENDING_CALLS}); await some before starting more.`);
      } else if (argsJson !== undefined && argsJson.length > limit) {
        refuse(id, `The arguments of host call "${name}" are larger than the ${formatBytes(limit)} limit.`);
      } else {
        this.#host.call(name, argsJson).then(
          (json) => this.#answer(json === undefined ? `[${id},2]` : `[${id},1,${json}]`),
          (error: unknown) => this.#answer(`[${id},0,${JSON.stringify(error instanceof Error ? error.message : String(error))}]`),
        );
      }
    }
  }

  /** Answers wait here until the guest next runs; all of them go in with one call into the engine. */
  #answer(answer: string): void {
    if (this.#disposed) return;
    this.#answers.push(answer);
    this.#wakeSoon();
  }

  /**
   * Hands the waiting answers to the guest's deliver(); their promises settle when the jobs run
   * next. Resolving looks up `then` on each answer, which a guest may have made a getter that
   * throws: that error is returned, and ends the run like any uncaught one.
   */
  #deliver(): QuickJSHandle | undefined {
    const answers = this.#answers;
    if (answers.length === 0) return undefined;
    this.#answers = [];
    this.#inFlight -= answers.length;
    const vm = this.#vm;
    try {
      const result = vm.newString(`[${answers.join(",")}]`).consume((batch) => vm.callFunction(this.#deliverFn as QuickJSHandle, vm.undefined, batch));
      if (result.error) return result.error;
      result.value.dispose();
    } catch (error) {
      // Delivering fails here only when the guest is out of memory or past its deadline; the loop reports that.
      this.#settleError ??= error;
    }
    return undefined;
  }

  #setTimer(callback: QuickJSHandle, ms: number, repeat: boolean): number {
    if (this.#timers.size >= MAX_TIMERS) throw new RangeError(`Too many pending timers (limit ${MAX_TIMERS}).`);
    const id = ++this.#timerSeq;
    const timer: Timer = { callback: callback.dup(), handle: undefined, every: repeat ? ms : undefined };
    this.#timers.set(id, timer);
    this.#arm(id, timer, ms);
    return id;
  }

  /** A timer due after the deadline could never fire within the run, so none is scheduled. */
  #arm(id: number, timer: Timer, ms: number): void {
    timer.handle = this.#now() + ms < this.#request.deadline ? setTimeout(() => this.#fireTimer(id), ms) : undefined;
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
    if (timer.every === undefined) this.#timers.delete(id);
    this.#resumeCpu();
    const result = this.#vm.callFunction(timer.callback, this.#vm.undefined);
    this.#pauseCpu();
    if (result.error) this.#timerError ??= result.error;
    else result.value.dispose();
    if (timer.every === undefined) timer.callback.dispose();
    else if (this.#timers.get(id) === timer) this.#arm(id, timer, timer.every);
    this.#wakeSoon();
  }

  /** Drives the module promise, then the default export, to a settled state. */
  async #settle(evaluated: QuickJSHandle, namespaces: number): Promise<RuntimeOutcome> {
    const vm = this.#vm;
    let pending = evaluated;
    let namespace = namespaces;
    for (;;) {
      if (this.#settleError !== undefined) {
        pending.dispose();
        const message = `A host call's answer could not be handed to the snippet: ${String(this.#settleError)}`;
        return { ok: false, error: { kind: this.#classify(undefined, message), message } };
      }
      const undeliverable = this.#deliver();
      if (undeliverable) {
        pending.dispose();
        return this.#fail(undeliverable);
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
        if (namespace > 0) {
          pending = vm.getProp(state.value, "default");
          state.value.dispose();
          namespace--;
          continue;
        }
        return this.#serialize(state.value);
      }
      if (this.#shouldStop()) {
        pending.dispose();
        return this.#stopped();
      }
      if (this.#inFlight === 0 && this.#answers.length === 0 && this.#timers.size === 0) {
        pending.dispose();
        return {
          ok: false,
          error: {
            kind: "timeout",
            message: "The snippet awaits a promise that can never settle: no host call or timer is pending.",
          },
        };
      }
      this.#pauseCpu();
      await this.#nextEvent();
      this.#resumeCpu();
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

  /** Waits for an answer, a timer, the deadline or an abort; the deadline timer and abort listener are set once per run, not per wait. */
  #nextEvent(): Promise<void> {
    if (!this.#watching) {
      const wake = () => this.#wake?.();
      let timer: ReturnType<typeof setTimeout>;
      const untilDeadline = () => {
        const left = this.#request.deadline - this.#now();
        // A timer may fire a moment before the clock reads its time: then nothing else would wake the loop, so wait out the rest.
        if (left > 0) timer = setTimeout(untilDeadline, left);
        else wake();
      };
      timer = setTimeout(untilDeadline, Math.max(0, this.#request.deadline - this.#now()));
      this.#host.signal.addEventListener("abort", wake);
      this.#watching = () => {
        clearTimeout(timer);
        this.#host.signal.removeEventListener("abort", wake);
      };
    }
    return new Promise((resolve) => {
      this.#wake = () => {
        this.#wake = undefined;
        resolve();
      };
    });
  }

  /**
   * JSON of the default export: primitives here, objects through the guest-side serializer, which
   * stops at the size and depth limits instead of building the whole text first.
   */
  #serialize(value: QuickJSHandle): RuntimeOutcome {
    const vm = this.#vm;
    const { maxResultBytes } = this.#request.limits;
    const maxDepth = this.#request.limits.maxResultDepth ?? DEFAULT_MAX_RESULT_DEPTH;
    const type = vm.typeof(value);
    switch (type) {
      case "undefined":
        return { ok: true, resultJson: undefined };
      case "number":
        return { ok: true, resultJson: JSON.stringify(vm.getNumber(value)) };
      case "boolean":
        return { ok: true, resultJson: vm.dump(value) === true ? "true" : "false" };
      case "function":
      case "symbol":
      case "bigint":
        value.dispose();
        return { ok: false, error: { kind: "result", message: `The default export is a ${type}, which has no JSON form.` } };
    }
    if (type === "string") {
      const length = vm.getProp(value, "length").consume((handle) => vm.getNumber(handle));
      if (length > maxResultBytes) return tooBig(maxResultBytes);
    }
    const json = this.#callSerializer(value, maxResultBytes, maxDepth);
    value.dispose();
    if (json.error) {
      const error = this.#describe(json.error);
      if (error.kind !== "runtime") return { ok: false, error };
      return { ok: false, error: { kind: "result", message: `The default export cannot be turned into JSON: ${error.message}` } };
    }
    return json.value.consume((text): RuntimeOutcome => {
      const kind = vm.typeof(text);
      if (kind === "number") {
        return vm.getNumber(text) === SERIALIZE_TOO_DEEP
          ? {
              ok: false,
              error: { kind: "result", message: `The default export is nested deeper than the ${maxDepth}-level limit; flatten it or return a part of it.` },
            }
          : tooBig(maxResultBytes);
      }
      if (kind !== "string") return { ok: true, resultJson: undefined };
      const resultJson = vm.getString(text);
      if (Buffer.byteLength(resultJson) > maxResultBytes) return tooBig(maxResultBytes);
      return { ok: true, resultJson };
    });
  }

  /** Strings go through the captured native JSON.stringify; objects through the prelude's serializer, compiled now. */
  #callSerializer(value: QuickJSHandle, maxLength: number, maxDepth: number) {
    const vm = this.#vm;
    if (vm.typeof(value) !== "object") return vm.callFunction(this.#stringify as QuickJSHandle, vm.undefined, value);
    if (!this.#serializer) {
      const loaded = vm.callFunction(this.#serializerGetter as QuickJSHandle, vm.undefined);
      if (loaded.error) return loaded;
      this.#serializer = loaded.value;
    }
    const limits = [vm.newNumber(maxLength), vm.newNumber(maxDepth)];
    try {
      return vm.callFunction(this.#serializer, vm.undefined, value, ...limits);
    } finally {
      for (const handle of limits) handle.dispose();
    }
  }

  #stopped(): RuntimeOutcome {
    const kind = this.#host.isAborted() ? "aborted" : "timeout";
    return { ok: false, error: { kind, name: "InternalError", message: this.#interrupted() } };
  }

  /** QuickJS's word for a stop by the interrupt handler, or the CPU budget's sentence when that stopped it. */
  #interrupted(): string {
    return this.#cpuStopped && this.#now() < this.#request.deadline
      ? `The snippet computed for more than its ${this.#request.limits.cpuMs} ms CPU budget (waiting on tools not counted) and was stopped.`
      : "interrupted";
  }

  #fail(handle: QuickJSHandle): RuntimeOutcome {
    const error = this.#describe(handle);
    return { ok: false, error };
  }

  /**
   * Reads an exception; the guest may have thrown anything, including objects with hostile getters
   * (they get a short time budget) and strings of any size (each is cut before it is copied out).
   */
  #describe(handle: QuickJSHandle): RuntimeError {
    const vm = this.#vm;
    const pastDeadline = this.#now() >= this.#request.deadline;
    this.#stopAt = Math.min(this.#stopAt, this.#now() + DESCRIBE_BUDGET_MS);
    this.#cpuCounted = false;
    try {
      const read = (key: string, max: number): string | undefined => {
        const property = vm.getProp(handle, key);
        try {
          return vm.typeof(property) === "string" ? this.#readString(property, max) : undefined;
        } finally {
          property.dispose();
        }
      };
      const type = vm.typeof(handle);
      const isObject = type === "object";
      const name = isObject ? read("name", 256) : undefined;
      const message = isObject
        ? (read("message", MAX_ERROR_MESSAGE_LENGTH) ?? this.#preview(handle))
        : type === "string"
          ? this.#readString(handle, MAX_ERROR_MESSAGE_LENGTH)
          : this.#preview(handle);
      const stack = isObject ? read("stack", MAX_ERROR_STACK_LENGTH) : undefined;
      const kind = this.#classify(name, message, pastDeadline);
      if (name === "InternalError" && message === "interrupted") return { kind, name, message: this.#interrupted(), stack };
      return { kind, name, message, stack };
    } catch {
      return { kind: this.#classify(undefined, "", pastDeadline), message: "The snippet threw a value that cannot be read." };
    } finally {
      handle.dispose();
    }
  }

  /** A guest string, whole (NUL included) and cut at `max` characters, copied out through JSON. */
  #readString(value: QuickJSHandle, max: number): string {
    const vm = this.#vm;
    const length = vm.getProp(value, "length").consume((handle) => vm.getNumber(handle));
    let source = value;
    if (length > max) {
      const bounds = [vm.newNumber(0), vm.newNumber(max)];
      source = vm.unwrapResult(vm.callFunction(this.#slice as QuickJSHandle, value, ...bounds));
      for (const handle of bounds) handle.dispose();
    }
    try {
      const json = vm.unwrapResult(vm.callFunction(this.#stringify as QuickJSHandle, vm.undefined, source));
      const text = json.consume((handle) => JSON.parse(vm.getString(handle)) as string);
      return length > max ? `${text}… (${length - max} more characters)` : text;
    } finally {
      if (source !== value) source.dispose();
    }
  }

  /** Short JSON of a thrown value that is not an Error (`throw { code: 1 }`), or its type. */
  #preview(handle: QuickJSHandle): string {
    const vm = this.#vm;
    const type = vm.typeof(handle);
    if (type === "undefined" || type === "symbol" || type === "function") return `Uncaught ${type}`;
    if (type === "bigint") return "Uncaught bigint";
    if (type === "number" || type === "boolean") return `Uncaught ${String(vm.dump(handle))}`;
    const json = this.#callSerializer(handle, 200, 8);
    if (json.error) {
      json.error.dispose();
      return `Uncaught ${type}`;
    }
    return json.value.consume((text) => (vm.typeof(text) === "string" ? `Uncaught ${vm.getString(text)}` : `Uncaught ${type}`));
  }

  #classify(name: string | undefined, message: string, pastDeadline = this.#now() >= this.#request.deadline): RuntimeError["kind"] {
    if (this.#host.isAborted()) return "aborted";
    if (name === "InternalError" && message === "interrupted") return "timeout";
    if (pastDeadline) return "timeout";
    if (message === "out of memory") return "memory";
    if (message === "stack overflow" || (name === "RangeError" && /call stack/i.test(message))) return "stack_overflow";
    return "runtime";
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function tooBig(limit: number): RuntimeOutcome {
  return {
    ok: false,
    error: { kind: "result", message: `The default export's JSON is larger than the ${formatBytes(limit)} limit; return less, or a summary.` },
  };
}

/** The engine itself failed (V8 stack exhausted under the WASM frames, WASM trap); its state cannot be trusted. */
function hostFailure(error: unknown): RuntimeOutcome {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RangeError && /call stack/i.test(message)) {
    return { ok: false, retire: true, error: { kind: "stack_overflow", message: "Maximum call stack size exceeded." } };
  }
  return { ok: false, retire: true, error: { kind: "internal", message: `The sandbox engine failed: ${message.slice(0, MAX_ERROR_MESSAGE_LENGTH)}` } };
}
