import type { Logger, ToolResult } from "@codemux/core";
import { randomUUID } from "node:crypto";
import { HooksError, PluginFailedError, PluginRefusedError } from "./errors";
import type { BeforeCallResult, CallSession, Observability, Plugin, PluginCall, ToolHints, ToolInfo } from "./types";

export const DEFAULT_PRIORITY = 100;
export const DEFAULT_HOOK_TIMEOUT_MS = 5_000;
/** The `_meta` key naming the plugin that answered without calling the tool. */
export const SHORT_CIRCUIT_META = "codemux/shortCircuitedBy";

/** One call as the chain's host (the middleware, wrapWithProxy) describes it. */
export interface ChainInput {
  name: string;
  server: string;
  tool: string;
  definition: ToolInfo | undefined;
  annotations: ToolHints;
  arguments: Record<string, unknown>;
  origin: string;
  session: CallSession;
  signal: AbortSignal | undefined;
  state: Map<string, unknown>;
}

export interface ChainOptions {
  logger: Logger;
  clock?: () => number;
  observability?: () => Observability | undefined;
}

type Outcome = { result: ToolResult } | { error: unknown };
type Invoked<T> = { ok: true; value: T } | { ok: false; reason: string; error: unknown };

/** Plugins in run order: priority, highest first; equal priorities keep their given order. */
export function orderPlugins(plugins: readonly Plugin[]): Plugin[] {
  return plugins
    .map((plugin, index) => ({ plugin, index }))
    .sort((a, b) => (b.plugin.priority ?? DEFAULT_PRIORITY) - (a.plugin.priority ?? DEFAULT_PRIORITY) || a.index - b.index)
    .map((p) => p.plugin);
}

/**
 * Runs plugins around one call as an onion: before-hooks highest priority first, then the call
 * (unless one answered or refused), then after-hooks (or onError) of the plugins that ran, in
 * reverse. Each hook runs under its time budget; a failing hook is logged with the plugin's name
 * and skipped, or stops the call when the plugin is fail-closed.
 */
export class PluginChain {
  readonly plugins: readonly Plugin[];
  readonly #logger: Logger;
  readonly #clock: () => number;
  readonly #observability: () => Observability | undefined;

  constructor(plugins: readonly Plugin[], options: ChainOptions) {
    this.plugins = orderPlugins(plugins).filter((p) => p.beforeCall || p.afterCall || p.onError || p.onRefused);
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#observability = options.observability ?? (() => undefined);
  }

  get empty(): boolean {
    return this.plugins.length === 0;
  }

  async run(input: ChainInput, next: (args: Record<string, unknown>) => Promise<ToolResult>): Promise<ToolResult> {
    const call = new CallView(input, this.#clock());
    const ran: Plugin[] = [];
    let outcome: Outcome | undefined;

    for (const plugin of this.plugins) {
      ran.push(plugin);
      if (!plugin.beforeCall) continue;
      const before = plugin.beforeCall.bind(plugin);
      const answer = await this.#invoke(plugin, "beforeCall", call, () => before(call), checkBefore);
      if (!answer.ok) {
        if (plugin.failClosed) {
          outcome = { error: new PluginFailedError(plugin.name, "beforeCall", answer.reason, { cause: answer.error }) };
          break;
        }
        continue;
      }
      const value = answer.value;
      if (!value || value.action === "continue") {
        if (value?.arguments) call.setArguments(value.arguments);
        continue;
      }
      if (value.action === "respond") {
        outcome = { result: { ...value.result, _meta: { ...value.result._meta, [SHORT_CIRCUIT_META]: plugin.name } } };
        break;
      }
      this.#count("codemux_plugin_refusals_total", { plugin: plugin.name });
      outcome = { error: refusal(plugin.name, value.error) };
      break;
    }

    if (!outcome) {
      try {
        outcome = { result: await next(call.arguments) };
      } catch (error) {
        outcome = { error };
      }
    }

    for (let i = ran.length - 1; i >= 0; i--) {
      const plugin = ran[i]!;
      if ("result" in outcome) {
        if (!plugin.afterCall) continue;
        const after = plugin.afterCall.bind(plugin);
        const result: ToolResult = outcome.result;
        const answer: Invoked<ToolResult> = await this.#invoke(plugin, "afterCall", call, () => after(call, result), checkResult);
        if (!answer.ok) {
          if (plugin.failClosed) outcome = { error: new PluginFailedError(plugin.name, "afterCall", answer.reason, { cause: answer.error, after: true }) };
        } else if (answer.value) outcome = { result: answer.value };
      } else {
        if (!plugin.onError) continue;
        const onError = plugin.onError.bind(plugin);
        const error: unknown = outcome.error;
        const answer: Invoked<ToolResult | Error> = await this.#invoke(plugin, "onError", call, () => onError(call, error), checkErrorAnswer);
        if (answer.ok && answer.value) outcome = answer.value instanceof Error ? { error: answer.value } : { result: answer.value };
      }
    }

    this.#record(call, outcome);
    if ("error" in outcome) throw outcome.error;
    return outcome.result;
  }

  /** Tells the plugins that record refusals of a call the host refused before the chain; a failing one is logged and skipped. */
  refused(input: ChainInput, error: Error): void {
    const call = new CallView(input, this.#clock());
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

  async #invoke<T>(plugin: Plugin, hook: string, call: CallView, run: () => unknown, check: (value: unknown) => T | undefined): Promise<Invoked<T>> {
    const budget = plugin.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    let answer: Invoked<T>;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new HookTimeout(budget)), budget);
      });
      const value = await Promise.race([Promise.resolve().then(run), timeout]);
      const checked = check(value);
      answer =
        checked === undefined && value !== undefined
          ? { ok: false, reason: `answered ${describe(value)}, which is not a valid answer`, error: undefined }
          : { ok: true, value: checked as T };
    } catch (error) {
      answer = {
        ok: false,
        reason:
          error instanceof HookTimeout ? `timed out after ${budget} ms` : error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300),
        error,
      };
    } finally {
      clearTimeout(timer);
    }
    if (!answer.ok) {
      this.#logger.warn(
        `plugin "${plugin.name}" ${hook} failed on ${call.name} (call ${call.id}): ${answer.reason}${plugin.failClosed ? "; it is fail-closed, so the call stops" : "; the call goes on without it"}`,
      );
      this.#count("codemux_plugin_failures_total", { plugin: plugin.name, hook });
    }
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
  readonly id = randomUUID();
  readonly name: string;
  readonly server: string;
  readonly tool: string;
  readonly definition: ToolInfo | undefined;
  readonly annotations: ToolHints;
  readonly origin: string;
  readonly session: CallSession;
  readonly principal: string;
  readonly signal: AbortSignal | undefined;
  readonly state: Map<string, unknown>;
  readonly fields: Record<string, string | number | boolean> = {};
  #arguments: Record<string, unknown>;

  constructor(
    input: ChainInput,
    readonly startedAt: number,
  ) {
    this.name = input.name;
    this.server = input.server;
    this.tool = input.tool;
    this.definition = input.definition;
    this.annotations = input.annotations;
    this.origin = input.origin;
    this.session = input.session;
    this.principal = input.session.principal;
    this.signal = input.signal;
    this.state = input.state;
    this.#arguments = input.arguments;
  }

  get arguments(): Record<string, unknown> {
    return this.#arguments;
  }

  setArguments(value: Record<string, unknown>): void {
    this.#arguments = value;
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

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (isObject(value)) return `an object with keys ${Object.keys(value).slice(0, 5).join(", ") || "none"}`;
  return `a ${typeof value}`;
}
