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
  /** Bytes of the result's JSON (0 when there was none); with the lazy entry, its strings' UTF-8 bytes and the JSON punctuation, escapes not counted. */
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
 * Whether entries are masked and turned to text only when the page reads them (the default): a call
 * then keeps a bounded copy of its arguments and result, and pays no regex or JSON.stringify.
 * `CODEMUX_ACTIVITY_LAZY=0` (or `false`, `off`) masks each call's copy as it is kept, as before.
 */
export function activityLazyByDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  return !/^(0|false|off)$/i.test((env.CODEMUX_ACTIVITY_LAZY ?? "").trim());
}

/**
 * The recent calls of this instance, for the Activity page: a ring of the last `MAX_ACTIVITY` calls
 * with arguments and results masked (secret-named keys, and secret-shaped text) before they are kept.
 */
export class ActivityLog {
  /** A ring: `#entries[#start]` is the oldest of `#entries.length` (at most `MAX_ACTIVITY`) kept, so a call adds without moving the others. */
  readonly #entries: ActivityEntry[] = [];
  #start = 0;
  #next = 1;
  readonly #now: () => number;
  readonly #mask: SecretMask;
  readonly #lazy: boolean;

  /**
   * `mask`: the redact plugin's patterns (`core.mask`): the page records calls before the plugins mask their results.
   * `lazy`: mask and stringify when an entry is read (see `activityLazyByDefault`).
   */
  constructor(now: () => number = Date.now, mask: SecretMask = NO_MASK, lazy = activityLazyByDefault()) {
    this.#now = now;
    this.#mask = mask;
    this.#lazy = lazy;
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
    const count = this.#entries.length;
    for (let i = count - 1; i >= 0 && out.length < limit; i--) {
      const entry = this.#entries[(this.#start + i) % count] as ActivityEntry;
      if (keep(entry)) out.push(entry);
    }
    return out;
  }

  /** Drops every call of `principal` (`codemux forget`); returns how many went. */
  forget(principal: string): number {
    const before = this.#entries.length;
    const kept = this.list((entry) => entry.principal !== principal).reverse();
    this.#entries.splice(0, before, ...kept);
    this.#start = 0;
    return before - kept.length;
  }

  get(id: number): ActivityEntry | undefined {
    return this.#entries.find((e) => e.id === id);
  }

  #keep(entry: ActivityEntry): void {
    if (this.#entries.length < MAX_ACTIVITY) this.#entries.push(entry);
    else {
      this.#entries[this.#start] = entry;
      this.#start = (this.#start + 1) % MAX_ACTIVITY;
    }
  }

  #add(ctx: CallContext, call: { started: number; outcome: ActivityEntry["outcome"]; result?: ToolResult; error?: unknown }): void {
    const errorText = call.error === undefined ? "" : call.error instanceof Error ? call.error.message : String(call.error);
    const head: Head = {
      id: this.#next++,
      started: call.started,
      principal: ctx.session.principal,
      tool: ctx.entry.qualifiedName,
      origin: String(ctx.origin),
      durationMs: Math.max(0, this.#now() - call.started),
      outcome: call.outcome,
    };
    if (this.#lazy) {
      // Bounded copies taken now (the call's objects are not kept: they may be large, and may change after the call).
      const kept = { args: boundedCopy(ctx.arguments), result: call.result ? boundedCopy(call.result) : undefined, errorText };
      this.#keep(new LazyEntry(head, kept, this.#mask));
      return;
    }
    const resultText = call.result ? JSON.stringify(call.result) : "";
    const { started, ...rest } = head;
    this.#keep({
      ...rest,
      time: new Date(started).toISOString(),
      bytes: Buffer.byteLength(resultText),
      arguments: masked(this.#mask, JSON.stringify(maskKeys(ctx.arguments, 0)) ?? "{}"),
      result: masked(this.#mask, call.result ? resultText : errorText),
    });
  }
}

/** What an entry knows of its call at once; `started` is shown as `time`. */
type Head = Omit<ActivityEntry, "time" | "bytes" | "arguments" | "result"> & { started: number };

/**
 * An entry whose `time`, `arguments` and `result` are text made on first read (masked), from the bounded
 * copies it was given. A class, not an object with accessors defined per entry: adding one stays a few
 * allocations on the answer's path. `toJSON` gives the fields as the eager entry has them.
 */
class LazyEntry implements ActivityEntry {
  readonly id: number;
  readonly principal: string;
  readonly tool: string;
  readonly origin: string;
  readonly durationMs: number;
  readonly outcome: ActivityEntry["outcome"];
  readonly bytes: number;
  readonly #started: number;
  readonly #arguments: Kept;
  readonly #result: Kept | undefined;
  readonly #errorText: string;
  readonly #mask: SecretMask;
  #time: string | undefined;
  #argumentsText: string | undefined;
  #resultText: string | undefined;

  constructor(head: Head, { args, result, errorText }: { args: Kept; result: Kept | undefined; errorText: string }, mask: SecretMask) {
    this.id = head.id;
    this.principal = head.principal;
    this.tool = head.tool;
    this.origin = head.origin;
    this.durationMs = head.durationMs;
    this.outcome = head.outcome;
    this.bytes = result?.bytes ?? 0;
    this.#started = head.started;
    this.#arguments = args;
    this.#result = result;
    this.#errorText = errorText;
    this.#mask = mask;
  }

  get time(): string {
    return (this.#time ??= new Date(this.#started).toISOString());
  }

  get arguments(): string {
    return (this.#argumentsText ??= masked(this.#mask, JSON.stringify(maskKeys(this.#arguments.value, 0)) ?? "{}", this.#arguments.chars));
  }

  get result(): string {
    const result = this.#result;
    return (this.#resultText ??= result ? masked(this.#mask, JSON.stringify(result.value) ?? "{}", result.chars) : masked(this.#mask, this.#errorText));
  }

  toJSON(): ActivityEntry {
    const { id, time, principal, tool, origin, durationMs, outcome, bytes } = this;
    return { id, time, principal, tool, origin, durationMs, outcome, bytes, arguments: this.arguments, result: this.result };
  }
}

/**
 * Cut first, then masked (by the redact plugin's patterns and the built-in ones): the patterns are linear, and run on bounded text.
 * `total`: the whole JSON's length when `text` is a bounded copy's (a lower bound: escapes not counted).
 */
function masked(mask: SecretMask, text: string, total = text.length): string {
  const more = Math.max(total, text.length) - MAX_KEPT_CHARS;
  const cut = more > 0 ? `${text.slice(0, MAX_KEPT_CHARS)}… (${total > text.length ? "about " : ""}${more} more characters not kept)` : text;
  return redactSecrets(mask.text(cut));
}

/** The value with every secret-named key's value replaced (`password`, `apiKey`, `token`...). */
function maskKeys(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH || typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => maskKeys(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, isSecretParameter(key) ? "***" : maskKeys(item, depth + 1)]));
}

/** A bounded copy of a JSON value, its JSON length (at least) and its UTF-8 bytes. */
interface Kept {
  value: unknown;
  /** Characters of the whole value's JSON, escapes not counted. */
  chars: number;
  /** UTF-8 bytes of the whole value's JSON, escapes not counted. */
  bytes: number;
}

/**
 * A copy of `value` whose JSON begins as the original's for at least `MAX_KEPT_CHARS` characters and
 * holds no more than about that many: strings cut (and copied, so that no slice keeps a large original
 * alive), items and keys past the budget left out; the sizes count the whole value. The walk is linear
 * in the value, at most `MAX_DEPTH` deep.
 */
export function boundedCopy(value: unknown): Kept {
  let chars = 0;
  let bytes = 0;
  const room = () => chars <= MAX_KEPT_CHARS;
  const string = (text: string): string | undefined => {
    const keep = room() ? text.slice(0, MAX_KEPT_CHARS + 1 - chars) : undefined;
    chars += text.length + 2;
    bytes += Buffer.byteLength(text) + 2;
    // A flat copy: a slice of a large string would keep all of it alive.
    return keep === undefined ? undefined : keep.length < 13 || keep.length === text.length ? keep : Buffer.from(keep, "utf16le").toString("utf16le");
  };
  const walk = (item: unknown, depth: number): unknown => {
    if (typeof item === "string") return string(item);
    if (typeof item !== "object" || item === null) {
      const fits = room();
      const text = String(JSON.stringify(item) ?? "null");
      chars += text.length;
      bytes += text.length;
      return fits ? item : undefined;
    }
    // Deeper than the walk goes: kept as its JSON text (rare; such a value is not walked for keys either way).
    if (depth > MAX_DEPTH) return string(JSON.stringify(item) ?? "null");
    // The opening bracket now, the closing one after the items: `chars` is the position reached.
    chars += 1;
    bytes += 1;
    if (Array.isArray(item)) {
      const out: unknown[] = [];
      for (const [i, element] of item.entries()) {
        const comma = i > 0 ? 1 : 0;
        chars += comma;
        bytes += comma;
        const fits = room();
        const copy = walk(element, depth + 1);
        if (fits) out.push(copy ?? null);
      }
      chars += 1;
      bytes += 1;
      return out;
    }
    const out: Record<string, unknown> = {};
    let first = true;
    for (const [key, element] of Object.entries(item as Record<string, unknown>)) {
      if (element === undefined) continue;
      // The comma before (none for the first) and the colon after the key.
      const punctuation = first ? 1 : 2;
      first = false;
      chars += punctuation;
      bytes += punctuation;
      const fits = room();
      string(key);
      const copy = walk(element, depth + 1);
      if (fits && copy !== undefined) out[key] = copy;
    }
    chars += 1;
    bytes += 1;
    return out;
  };
  const copy = walk(value, 0);
  return { value: copy, chars, bytes };
}
