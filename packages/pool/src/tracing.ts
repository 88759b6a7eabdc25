import {
  context,
  propagation,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from "@opentelemetry/api";

/** The instrumentation scope every codemux span is made under. */
export const TRACER_NAME = "codemux";

/** What the API's global provider hands out until a real one is registered. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether a tracer provider is registered (the CLI does it when `OTEL_*` asks): a few property reads, so a
 * call site checks it before building any span or attribute, and costs nothing more with tracing off.
 */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Runs `work` inside a new span (its parent: `parent`, else the active context) and ends the span when the
 * promise settles: an error sets the status and `error.type`. Call only when `tracing()` is true.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context | undefined; links?: Link[] },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links }, parent);
  let running: Promise<T>;
  try {
    running = context.with(trace.setSpan(parent, span), work, undefined, span);
  } catch (error) {
    running = Promise.reject(error);
  }
  return running.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      failed(span, error);
      span.end();
      throw error;
    },
  );
}

/** Marks a span failed by `error`: its status, `error.type` (the error's stable code or class), and the exception event. */
export function failed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | undefined)?.code;
  const type = typeof code === "string" ? code : error instanceof Error ? error.name : "unknown";
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 300) : undefined });
  if (error instanceof Error) span.recordException({ name: error.name, message: error.message.slice(0, 300) });
}

/** The W3C `traceparent` (and `tracestate`) of the active context, as a request's `_meta` or headers carry them; undefined when none. */
export function traceCarrier(active: Context = context.active()): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return carrier.traceparent === undefined ? undefined : carrier;
}

/** The context a carrier (inbound headers, a request's `_meta`) names, on top of `base`; `base` itself when it names none. */
export function contextFrom(carrier: Record<string, unknown> | undefined, base: Context = context.active()): Context {
  if (carrier === undefined || typeof carrier.traceparent !== "string") return base;
  return propagation.extract(base, carrier, {
    get: (holder, key) => {
      const value = holder[key];
      return typeof value === "string" ? value.slice(0, 512) : undefined;
    },
    keys: (holder) => Object.keys(holder),
  });
}

export { SpanKind };
