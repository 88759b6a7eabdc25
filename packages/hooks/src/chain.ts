import { composeMiddleware, FOLLOWED_TASK_STATE, type CallContext, type Logger, type NextCall, type ToolCallMiddleware, type ToolResult } from "@codemux/core";
import { randomUUID } from "node:crypto";
import { HooksError, PluginFailedError, PluginRefusedError } from "./errors";
import type { BeforeCallResult, CallSession, Observability, Plugin, PluginCall, ToolHints, ToolInfo } from "./types";

export const DEFAULT_PRIORITY = 100;
export const DEFAULT_HOOK_TIMEOUT_MS = 5_000;
/** The `_meta` key naming the plugin that answered without calling the tool. */
export const SHORT_CIRCUIT_META = "codemux/shortCircuitedBy";

export interface ChainOptions {
  logger: Logger;
  clock?: () => number;
  observability?: () => Observability | undefined;
}

type Outcome = { result: ToolResult } | { error: unknown };
/** One hook of one plugin, on one call. */
type HookRun = { plugin: Plugin; hook: "beforeCall" | "afterCall" | "onError"; call: CallView };
type Invoked<T> = { ok: true; value: T } | { ok: false; reason: string; error: unknown };

/** Plugins in run order: priority, highest first; equal priorities keep their given order. */
export function orderPlugins(plugins: readonly Plugin[]): Plugin[] {
  return plugins
    .map((plugin, index) => ({ plugin, index }))
    .sort((a, b) => (b.plugin.priority ?? DEFAULT_PRIORITY) - (a.plugin.priority ?? DEFAULT_PRIORITY) || a.index - b.index)
    .map((p) => p.plugin);
}

/**
 * Compiles plugins to the call pipeline's one middleware model (`ToolCallMiddleware`, composed by core's
 * `composeMiddleware`), highest priority outermost: before-hooks run highest priority first, then the call
 * (unless one answered or refused), then after-hooks (or onError) of the plugins that ran, in
 * reverse. Each hook runs under its time budget; a failing hook is logged with the plugin's name
 * and skipped, or stops the call when the plugin is fail-closed.
 */
export class PluginChain {
  readonly plugins: readonly Plugin[];
  readonly #logger: Logger;
  readonly #clock: () => number;
  readonly #observability: () => Observability | undefined;
  /** The plugins compiled to middleware, first outermost, around the rest of the pipeline. */
  readonly #steps: (ctx: CallContext, next: NextCall) => Promise<ToolResult>;
  /**
   * Each running call's view, shared by the plugins' steps; dropped when the call ends. Not a WeakMap left to the
   * collector: V8's young-generation collections copy an entry's value even when its key is dead, so every call's
   * view (its context, session, signal) outlived the call (docs/perf/peers.md, "What outlives a scavenge").
   */
  readonly #views = new Map<CallContext, CallView>();

  constructor(plugins: readonly Plugin[], options: ChainOptions) {
    this.plugins = orderPlugins(plugins).filter((p) => p.beforeCall || p.afterCall || p.onError || p.onRefused);
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#observability = options.observability ?? (() => undefined);
    const steps = this.plugins.map((plugin) => this.#step(plugin));
    this.#steps = (ctx, next) => composeMiddleware(steps, next)(ctx);
  }

  get empty(): boolean {
    return this.plugins.length === 0;
  }

  /** How many calls' contexts are running on the chain now (a context run again while it runs counts once). */
  get running(): number {
    return this.#views.size;
  }

  /**
   * Runs the plugins around one call. `definition` is the tool's as the plugins see it: the catalog
   * entry's by default; wrapWithProxy passes undefined when its server did not list the tool.
   */
  run(ctx: CallContext, next: NextCall, definition: ToolInfo | undefined = ctx.entry.tool): Promise<ToolResult> {
    const call = new CallView(ctx, definition, this.#clock());
    this.#views.set(ctx, call);
    let steps: Promise<ToolResult>;
    try {
      steps = this.#steps(ctx, next);
    } catch (error) {
      steps = Promise.reject(error);
    }
    // One reaction, not an async wrapper: the call's view is dropped and its outcome recorded, then handed on as it was.
    return steps.then(
      (result) => {
        this.#end(ctx, call);
        this.#record(call, { result });
        return result;
      },
      (error: unknown) => {
        this.#end(ctx, call);
        this.#record(call, { error });
        throw error;
      },
    );
  }

  /** Drops a call's view (unless a run of the same context replaced it, which drops its own). */
  #end(ctx: CallContext, call: CallView): void {
    if (this.#views.get(ctx) === call) this.#views.delete(ctx);
  }

  /** Tells the plugins that record refusals of a call the host refused before the chain; a failing one is logged and skipped. */
  refused(ctx: CallContext, error: Error, definition: ToolInfo | undefined = ctx.entry.tool): void {
    const call = new CallView(ctx, definition, this.#clock());
    for (const plugin of this.plugins) {
      try {
        plugin.onRefused?.(call, error);
      } catch (failure) {
        this.#logger.warn(
          `plugin "${plugin.name}" onRefused failed on ${call.name}: ${failure instanceof Error ? failure.message.slice(0, 300) : String(failure)}`,
        );
      }
    }
  }

  /**
   * One plugin as a step of the call pipeline's middleware model: its beforeCall on the way in (which may
   * change the arguments, answer, or refuse), then the rest of the chain, then its afterCall or onError on the way out.
   */
  #step(plugin: Plugin): ToolCallMiddleware {
    if (!plugin.afterCall && !plugin.onError) return this.#beforeOnly(plugin);
    return async (ctx, next) => {
      const call = this.#views.get(ctx) as CallView;
      let outcome: Outcome | undefined;
      // A taken task's result comes in a second pass of its call, which was admitted (and counted) at its first.
      if (plugin.beforeCall && ctx.state.get(FOLLOWED_TASK_STATE) !== true) {
        const invoked = this.#before(plugin, call);
        outcome = this.#beforeOutcome(plugin, ctx, invoked instanceof Promise ? await invoked : invoked);
      }
      if (!outcome) {
        try {
          outcome = { result: await next(ctx) };
        } catch (error) {
          outcome = { error };
        }
      }
      if ("result" in outcome) {
        if (plugin.afterCall) {
          const after = plugin.afterCall.bind(plugin);
          const result: ToolResult = outcome.result;
          const invoked = this.#invoke({ plugin, hook: "afterCall", call }, () => after(call, result), checkResult);
          const answer: Invoked<ToolResult> = invoked instanceof Promise ? await invoked : invoked;
          if (!answer.ok) {
            if (plugin.failClosed) outcome = { error: new PluginFailedError(plugin.name, "afterCall", answer.reason, { cause: answer.error, after: true }) };
          } else if (answer.value) outcome = { result: answer.value };
        }
      } else if (plugin.onError) {
        const onError = plugin.onError.bind(plugin);
        const error: unknown = outcome.error;
        const answer: Invoked<ToolResult | Error> = await this.#invoke({ plugin, hook: "onError", call }, () => onError(call, error), checkErrorAnswer);
        if (answer.ok && answer.value) outcome = answer.value instanceof Error ? { error: answer.value } : { result: answer.value };
      }
      if ("error" in outcome) throw outcome.error;
      return outcome.result;
    };
  }

  /**
   * The step of a plugin with only a beforeCall (the pin plugin's): no async wrapper around the rest of the chain, whose
   * own promise is handed on when the hook lets the call through, in the same turn when the hook answered at once.
   */
  #beforeOnly(plugin: Plugin): ToolCallMiddleware {
    return (ctx, next) => {
      const proceed = (outcome: Outcome | undefined): Promise<ToolResult> => {
        if (outcome) return "error" in outcome ? Promise.reject(outcome.error) : Promise.resolve(outcome.result);
        try {
          return next(ctx);
        } catch (error) {
          return Promise.reject(error);
        }
      };
      if (!plugin.beforeCall || ctx.state.get(FOLLOWED_TASK_STATE) === true) return proceed(undefined);
      const invoked = this.#before(plugin, this.#views.get(ctx) as CallView);
      if (invoked instanceof Promise) return invoked.then((answer) => proceed(this.#beforeOutcome(plugin, ctx, answer)));
      return proceed(this.#beforeOutcome(plugin, ctx, invoked));
    };
  }

  #before(plugin: Plugin, call: CallView): Invoked<BeforeCallResult | undefined> | Promise<Invoked<BeforeCallResult | undefined>> {
    const before = (plugin.beforeCall as NonNullable<Plugin["beforeCall"]>).bind(plugin);
    return this.#invoke({ plugin, hook: "beforeCall", call }, () => before(call), checkBefore);
  }

  /** What a beforeCall's answer makes of the call: an answer, a refusal, a failure (fail-closed), or undefined to go on (with its arguments). */
  #beforeOutcome(plugin: Plugin, ctx: CallContext, answer: Invoked<BeforeCallResult | undefined>): Outcome | undefined {
    if (!answer.ok) {
      return plugin.failClosed ? { error: new PluginFailedError(plugin.name, "beforeCall", answer.reason, { cause: answer.error }) } : undefined;
    }
    if (answer.value?.action === "respond") {
      return { result: { ...answer.value.result, _meta: { ...answer.value.result._meta, [SHORT_CIRCUIT_META]: plugin.name } } };
    }
    if (answer.value?.action === "abort") {
      this.#count("codemux_plugin_refusals_total", { plugin: plugin.name });
      return { error: refusal(plugin.name, answer.value.error) };
    }
    if (answer.value?.arguments) ctx.arguments = answer.value.arguments;
    return undefined;
  }

  /**
   * Runs one hook under its time budget. A hook that answers at once (most do: the pin plugin's lookup) is
   * checked at once, with no timer; one that answers a promise races it.
   */
  #invoke<T>(hook: HookRun, run: () => unknown, check: (value: unknown) => T | undefined): Invoked<T> | Promise<Invoked<T>> {
    let value: unknown;
    let later: boolean;
    try {
      value = run();
      // Inside the try: reading `then` runs whatever getter the hook's answer has.
      later = isThenable(value);
    } catch (error) {
      return this.#failed(hook, { ok: false, reason: reasonOf(error), error });
    }
    return later ? this.#invokeLater(hook, value as PromiseLike<unknown>, check) : this.#checked(hook, value, check);
  }

  async #invokeLater<T>(hook: HookRun, pending: PromiseLike<unknown>, check: (value: unknown) => T | undefined): Promise<Invoked<T>> {
    const budget = hook.plugin.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    let value: unknown;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new HookTimeout(budget)), budget);
      });
      value = await Promise.race([pending, timeout]);
    } catch (error) {
      return this.#failed(hook, { ok: false, reason: error instanceof HookTimeout ? `timed out after ${budget} ms` : reasonOf(error), error });
    } finally {
      clearTimeout(timer);
    }
    return this.#checked(hook, value, check);
  }

  #checked<T>(hook: HookRun, value: unknown, check: (value: unknown) => T | undefined): Invoked<T> {
    let checked: T | undefined;
    try {
      checked = check(value);
    } catch (error) {
      return this.#failed(hook, { ok: false, reason: reasonOf(error), error });
    }
    if (checked === undefined && value !== undefined)
      return this.#failed(hook, { ok: false, reason: `answered ${describe(value)}, which is not a valid answer`, error: undefined });
    return { ok: true, value: checked as T };
  }

  #failed<T>({ plugin, hook, call }: HookRun, answer: Invoked<T> & { ok: false }): Invoked<T> {
    this.#logger.warn(
      `plugin "${plugin.name}" ${hook} failed on ${call.name} (call ${call.id}): ${answer.reason}${plugin.failClosed ? "; it is fail-closed, so the call stops" : "; the call goes on without it"}`,
    );
    this.#count("codemux_plugin_failures_total", { plugin: plugin.name, hook });
    return answer;
  }

  #count(name: string, labels: Record<string, string>): void {
    try {
      this.#observability()?.metrics?.increment(name, labels);
    } catch {
      // A broken metrics sink must not break calls.
    }
  }

  #record(call: CallView, outcome: Outcome): void {
    const onCall = this.#observability()?.onCall;
    if (!onCall) return;
    try {
      onCall({
        id: call.id,
        name: call.name,
        origin: call.origin,
        sessionId: call.session.id,
        principal: call.principal,
        durationMs: this.#clock() - call.startedAt,
        outcome: "error" in outcome ? "error" : outcome.result.isError ? "tool_error" : "ok",
        fields: call.fields,
      });
    } catch {
      // Observability is best-effort.
    }
  }
}

class HookTimeout extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/** The live view a plugin gets: arguments as they stand, and a place for log fields. */
class CallView implements PluginCall {
  #id: string | undefined;
  readonly name: string;
  readonly server: string;
  readonly tool: string;
  readonly annotations: ToolHints;
  readonly origin: string;
  readonly session: CallSession;
  readonly principal: string;
  readonly signal: AbortSignal | undefined;
  readonly state: Map<string, unknown>;
  readonly fields: Record<string, string | number | boolean> = {};

  constructor(
    readonly ctx: CallContext,
    readonly definition: ToolInfo | undefined,
    readonly startedAt: number,
  ) {
    this.name = ctx.entry.qualifiedName;
    this.server = ctx.entry.server;
    this.tool = ctx.entry.name;
    this.annotations = ctx.annotations;
    this.origin = ctx.origin;
    this.session = ctx.session;
    this.principal = ctx.session.principal;
    this.signal = ctx.signal;
    this.state = ctx.state;
  }

  /** Made when first read (a log line, a record): most calls are never named. */
  get id(): string {
    this.#id ??= randomUUID();
    return this.#id;
  }

  get arguments(): Record<string, unknown> {
    return this.ctx.arguments;
  }

  logField(name: string, value: string | number | boolean): void {
    if (Object.keys(this.fields).length < 50) this.fields[name.slice(0, 64)] = typeof value === "string" ? value.slice(0, 500) : value;
  }
}

function refusal(plugin: string, error: string | Error): Error {
  if (HooksError.isInstance(error)) return error;
  return new PluginRefusedError(plugin, typeof error === "string" ? error : error.message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isResult(value: unknown): value is ToolResult {
  return isObject(value) && Array.isArray(value.content);
}

function checkBefore(value: unknown): BeforeCallResult | undefined {
  if (!isObject(value)) return undefined;
  if (value.action === "continue" && (value.arguments === undefined || isObject(value.arguments))) return value as BeforeCallResult;
  if (value.action === "respond" && isResult(value.result)) return value as BeforeCallResult;
  if (value.action === "abort" && (typeof value.error === "string" || value.error instanceof Error)) return value as BeforeCallResult;
  return undefined;
}

function checkResult(value: unknown): ToolResult | undefined {
  return isResult(value) ? value : undefined;
}

function checkErrorAnswer(value: unknown): ToolResult | Error | undefined {
  return value instanceof Error ? value : checkResult(value);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as PromiseLike<unknown>).then === "function";
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (isObject(value)) return `an object with keys ${Object.keys(value).slice(0, 5).join(", ") || "none"}`;
  return `a ${typeof value}`;
}
