import { context, ProxyTracerProvider, SpanKind, SpanStatusCode, trace, type Attributes } from "@opentelemetry/api";

/** What the API's global provider hands out until a real one is registered. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** A Redis round trip worth a span of its own (a job queued, taken or saved; a shared record read or changed). */
export interface RedisSpan {
  /** `redis <operation>`: few names, never an id (ids go in attributes). */
  name: string;
  attributes?: Attributes;
}

/** Whether a tracer provider is registered (as `@codemux/pool`'s `tracing()`; redis depends on core only). */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

/** Runs one round trip in a client span (OTel's database conventions: `db.system.name` redis); call only when `tracing()`. */
export async function inRedisSpan<T>(span: RedisSpan, work: () => Promise<T>): Promise<T> {
  const started = trace
    .getTracer("codemux")
    .startSpan(span.name, { kind: SpanKind.CLIENT, attributes: { "db.system.name": "redis", ...span.attributes } }, context.active());
  try {
    return await work();
  } catch (error) {
    started.setAttribute("error.type", error instanceof Error ? error.name : "unknown");
    started.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 300) : undefined });
    throw error;
  } finally {
    started.end();
  }
}
