import { context, propagation, ProxyTracerProvider, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";

/** What the API's global provider hands out until a real one is registered. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether a tracer provider is registered (as `@codemux/pool`'s `tracing()`; jobs depend on core only). */
function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

/** The W3C context (`traceparent`, `tracestate`) of the request starting a job, kept with it (and in the shared queue's payload); undefined when not tracing. */
export function jobOrigin(): Record<string, string> | undefined {
  if (!tracing()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent === undefined ? undefined : carrier;
}

/**
 * A job's run as a span of its own trace, linked to the request that started it (on whichever instance took
 * it from the queue): a job outlives its request, so it is not that request's child. Undefined when not tracing.
 */
export function startJobSpan(job: { id: string; kind: string; origin: Record<string, string> | undefined; shared: boolean }): Span | undefined {
  if (!tracing()) return undefined;
  const origin = job.origin && trace.getSpanContext(propagation.extract(ROOT_CONTEXT, job.origin));
  return trace.getTracer("codemux").startSpan(
    `job ${job.kind}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { "codemux.job": job.id, "codemux.job.kind": job.kind, "codemux.job.shared_queue": job.shared },
      ...(origin ? { links: [{ context: origin }] } : {}),
    },
    ROOT_CONTEXT,
  );
}

/** Runs `work` in the job span's context, so that the job's calls are its children. */
export function inJobSpan<T>(span: Span | undefined, work: () => T): T {
  return span ? context.with(trace.setSpan(ROOT_CONTEXT, span), work) : work();
}

/** Ends a job's span with its status. */
export function endJobSpan(span: Span | undefined, status: string): void {
  if (!span) return;
  span.setAttribute("codemux.job.status", status);
  if (status !== "completed") span.setStatus({ code: SpanStatusCode.ERROR, message: status });
  span.end();
}
