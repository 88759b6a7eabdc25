import type { SessionInfo, ToolCallMiddleware, ToolResult } from "@codemux/core";

export type Labels = Record<string, string>;

/**
 * Who reads the metrics: a sample labelled with a `server` the reader may not know of is left out, and a gauge
 * that counts the catalog counts what the reader sees (a server its policy hides is never named to it).
 */
export interface MetricsReader {
  /** The reader's session (principal, groups, scopes), for gauges that count what it sees. */
  readonly session: SessionInfo;
  /** Whether the reader may know of `server`. */
  knowsServer(server: string): boolean;
}

/** Whether `reader` may see a sample with these labels. */
function shown(labels: Labels, reader: MetricsReader | undefined): boolean {
  return reader === undefined || labels.server === undefined || reader.knowsServer(labels.server);
}

/** A metric stops taking new label sets past this, so a plugin labelling by user input cannot grow memory without bound. */
const MAX_SERIES = 1000;
export const DEFAULT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** A label set's text, its names in order: `a="1",b="2"`. Built by concatenation (it runs for every sample of every call), sorting only when needed. */
function key(labels: Labels): string {
  const names = Object.keys(labels);
  if (!ascending(names)) names.sort();
  let text = "";
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    text += `${i === 0 ? "" : ","}${name}="${escapeLabel(labels[name] as string)}"`;
  }
  return text;
}

function ascending(names: readonly string[]): boolean {
  for (let i = 1; i < names.length; i++) if ((names[i - 1] as string) > (names[i] as string)) return false;
  return true;
}

const NEEDS_ESCAPE = /[\\\n"]/;

function escapeLabel(value: string): string {
  const text = value.length > 200 ? value.slice(0, 200) : value;
  // Most values (routes, statuses, tool names) have nothing to escape: one scan instead of three replaces.
  return NEEDS_ESCAPE.test(text) ? text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"') : text;
}

function braces(labelText: string): string {
  return labelText ? `{${labelText}}` : "";
}

export class Counter {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, value = 1): void {
    const k = key(labels);
    const series = this.#values.get(k);
    if (series) series.value += value;
    else if (this.#values.size < MAX_SERIES) this.#values.set(k, { labels: { ...labels }, value });
  }

  get(labels: Labels = {}): number {
    return this.#values.get(key(labels))?.value ?? 0;
  }

  render(reader?: MetricsReader): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, { labels, value }] of this.#values) if (shown(labels, reader)) lines.push(`${this.name}${braces(k)} ${value}`);
    return lines;
  }
}

/** Reads a gauge's values at scrape time, for the reader when one is given (see `MetricsReader`). */
export type GaugeCollector = (reader?: MetricsReader) => Array<[Labels, number]>;

export class Gauge {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  /** Read at scrape time, for values that live elsewhere (sessions open, servers by state). */
  #collect: GaugeCollector | undefined;
  constructor(
    readonly name: string,
    readonly help: string,
    collect?: GaugeCollector,
  ) {
    this.#collect = collect;
  }

  set(labels: Labels, value: number): void {
    const k = key(labels);
    if (!this.#values.has(k) && this.#values.size >= MAX_SERIES) return;
    this.#values.set(k, { labels: { ...labels }, value });
  }

  render(reader?: MetricsReader): string[] {
    const values = this.#collect ? this.#collect(reader).map(([labels, value]) => ({ labels, value })) : [...this.#values.values()];
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const { labels, value } of values) if (shown(labels, reader)) lines.push(`${this.name}${braces(key(labels))} ${value}`);
    return lines;
  }
}

export class Histogram {
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[] = DEFAULT_BUCKETS_S,
  ) {}

  observe(labels: Labels, value: number): void {
    const k = key(labels);
    let series = this.#series.get(k);
    if (!series) {
      if (this.#series.size >= MAX_SERIES) return;
      series = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(k, series);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= (this.buckets[i] as number)) series.counts[i] = (series.counts[i] ?? 0) + 1;
    series.sum += value;
    series.count++;
  }

  render(reader?: MetricsReader): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.#series) {
      if (!shown(s.labels, reader)) continue;
      const sep = k ? `${k},` : "";
      this.buckets.forEach((b, i) => lines.push(`${this.name}_bucket{${sep}le="${b}"} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket{${sep}le="+Inf"} ${s.count}`, `${this.name}_sum${braces(k)} ${s.sum}`, `${this.name}_count${braces(k)} ${s.count}`);
    }
    return lines;
  }
}

type Metric = Counter | Gauge | Histogram;

/**
 * The metrics `/metrics` serves in Prometheus text format. Plugins add their own with
 * `metrics.counter(name, help)`, `gauge` and `histogram`; asking twice for one name returns the same metric.
 *
 * @example
 * const recorders = httpCallRecorders();
 * const cacheHits = recorders.metrics.counter("myplugin_cache_hits_total", "Answers served from my cache.");
 * const core = new Codemux({ config, middleware: [async (ctx, next) => { cacheHits.inc({ server: ctx.entry.server }); return next(ctx); }, ...recorders.middleware] });
 * const http = new CodemuxHttpServer(core, { recorders });
 */
export class Metrics {
  readonly #metrics = new Map<string, Metric>();

  counter(name: string, help: string): Counter {
    return this.#get(name, () => new Counter(name, help), Counter);
  }

  gauge(name: string, help: string, collect?: GaugeCollector): Gauge {
    return this.#get(name, () => new Gauge(name, help, collect), Gauge);
  }

  histogram(name: string, help: string, buckets?: readonly number[]): Histogram {
    return this.#get(name, () => new Histogram(name, help, buckets), Histogram);
  }

  /** The Prometheus text exposition (format 0.0.4); with a reader, only what it may see (see `MetricsReader`). */
  render(reader?: MetricsReader): string {
    return `${[...this.#metrics.values()].flatMap((m) => m.render(reader)).join("\n")}\n`;
  }

  #get<T extends Metric>(name: string, make: () => T, kind: new (...args: never[]) => T): T {
    if (!NAME.test(name)) throw new RangeError(`"${name.slice(0, 100)}" is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*).`);
    const existing = this.#metrics.get(name);
    if (existing) {
      if (!(existing instanceof kind)) throw new RangeError(`Metric "${name}" already exists as another type.`);
      return existing;
    }
    const metric = make();
    this.#metrics.set(name, metric);
    return metric;
  }
}

/** The call-pipeline middleware that counts every downstream call, its errors and its latency, per server and origin. */
export function callMetricsMiddleware(metrics: Metrics): ToolCallMiddleware {
  const calls = metrics.counter("codemux_tool_calls_total", "Downstream tool calls, by server and origin.");
  const errors = metrics.counter("codemux_tool_errors_total", "Downstream tool calls that failed or returned isError, by server and origin.");
  const latency = metrics.histogram("codemux_tool_call_duration_seconds", "Downstream tool call latency, by server.");
  return async (ctx, next) => {
    const started = performance.now();
    // Named in order: their key is written without a sort.
    const labels = { origin: String(ctx.origin).slice(0, 40), server: ctx.entry.server };
    calls.inc(labels);
    let result: ToolResult | undefined;
    try {
      result = await next(ctx);
      return result;
    } finally {
      if (!result || result.isError) errors.inc(labels);
      latency.observe({ server: ctx.entry.server }, (performance.now() - started) / 1000);
    }
  };
}
