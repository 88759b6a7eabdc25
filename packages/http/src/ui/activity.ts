import {
  NO_MASK,
  isSecretParameter,
  redactSecrets,
  type CallContext,
  type RefusalObserver,
  type SecretMask,
  type ToolCallMiddleware,
  type ToolResult,
} from "@codemux/core";

/** One downstream call as the Activity page shows it; arguments and result are masked JSON text, cut at `MAX_KEPT_CHARS`. */
export interface ActivityEntry {
  id: number;
  time: string;
  principal: string;
  tool: string;
  origin: string;
  durationMs: number;
  outcome: "ok" | "tool_error" | "error" | "refused";
  /** Bytes of the result's JSON (0 when there was none). */
  bytes: number;
  arguments: string;
  result: string;
}

/** Calls kept (the newest); older ones leave as new ones come. */
export const MAX_ACTIVITY = 500;
/** Characters of arguments and of a result kept per call: enough to read, bounded in memory. */
const MAX_KEPT_CHARS = 16 * 1024;
/** Nesting walked when masking arguments by key; deeper values are kept as their masked text. */
const MAX_DEPTH = 20;

/**
 * The recent calls of this instance, for the Activity page: a ring of the last `MAX_ACTIVITY` calls
 * with arguments and results masked (secret-named keys, and secret-shaped text) before they are kept.
 */
export class ActivityLog {
  readonly #entries: ActivityEntry[] = [];
  #next = 1;
  readonly #now: () => number;
  readonly #mask: SecretMask;

  /** `mask`: the redact plugin's patterns (`core.mask`): the page records calls before the plugins mask their results. */
  constructor(now: () => number = Date.now, mask: SecretMask = NO_MASK) {
    this.#now = now;
    this.#mask = mask;
  }

  /** The middleware that records every call (and, as a refusal observer, the calls policies refused). */
  middleware(): ToolCallMiddleware & RefusalObserver {
    const middleware = async (ctx: CallContext, next: (ctx: CallContext) => Promise<ToolResult>) => {
      const started = this.#now();
      try {
        const result = await next(ctx);
        this.#add(ctx, { started, outcome: result.isError ? "tool_error" : "ok", result });
        return result;
      } catch (error) {
        this.#add(ctx, { started, outcome: "error", error });
        throw error;
      }
    };
    return Object.assign(middleware, { refused: (ctx: CallContext, error: Error) => this.#add(ctx, { started: this.#now(), outcome: "refused", error }) });
  }

  /** Newest first, those `keep` lets through, at most `limit`. */
  list(keep: (entry: ActivityEntry) => boolean = () => true, limit = MAX_ACTIVITY): ActivityEntry[] {
    const out: ActivityEntry[] = [];
    for (let i = this.#entries.length - 1; i >= 0 && out.length < limit; i--) {
      const entry = this.#entries[i] as ActivityEntry;
      if (keep(entry)) out.push(entry);
    }
    return out;
  }

  /** Drops every call of `principal` (`codemux forget`); returns how many went. */
  forget(principal: string): number {
    const before = this.#entries.length;
    const kept = this.#entries.filter((entry) => entry.principal !== principal);
    this.#entries.splice(0, before, ...kept);
    return before - kept.length;
  }

  get(id: number): ActivityEntry | undefined {
    return this.#entries.find((e) => e.id === id);
  }

  #add(ctx: CallContext, call: { started: number; outcome: ActivityEntry["outcome"]; result?: ToolResult; error?: unknown }): void {
    const resultText = call.result ? JSON.stringify(call.result) : "";
    const errorText = call.error === undefined ? "" : call.error instanceof Error ? call.error.message : String(call.error);
    this.#entries.push({
      id: this.#next++,
      time: new Date(call.started).toISOString(),
      principal: ctx.session.principal,
      tool: ctx.entry.qualifiedName,
      origin: String(ctx.origin),
      durationMs: Math.max(0, this.#now() - call.started),
      outcome: call.outcome,
      bytes: Buffer.byteLength(resultText),
      arguments: this.#masked(JSON.stringify(maskKeys(ctx.arguments, 0)) ?? "{}"),
      result: this.#masked(call.result ? resultText : errorText),
    });
    if (this.#entries.length > MAX_ACTIVITY) this.#entries.splice(0, this.#entries.length - MAX_ACTIVITY);
  }

  /** Cut first, then masked (by the redact plugin's patterns and the built-in ones): the patterns are linear, and run on bounded text. */
  #masked(text: string): string {
    const cut = text.length > MAX_KEPT_CHARS ? `${text.slice(0, MAX_KEPT_CHARS)}… (${text.length - MAX_KEPT_CHARS} more characters not kept)` : text;
    return redactSecrets(this.#mask.text(cut));
  }
}

/** The value with every secret-named key's value replaced (`password`, `apiKey`, `token`...). */
function maskKeys(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH || typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => maskKeys(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, isSecretParameter(key) ? "***" : maskKeys(item, depth + 1)]));
}
