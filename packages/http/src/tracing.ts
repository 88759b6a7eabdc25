import { redactSecrets } from "@codemux/core";
import { contextFrom, tracer } from "@codemux/pool";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import type { IncomingMessage } from "node:http";

/** One HTTP request's SERVER span and the context its handling runs in. */
export interface HttpSpan {
  span: Span;
  context: Context;
}

/**
 * Starts the SERVER span of one HTTP request (HTTP semantic conventions), continuing the caller's
 * `traceparent`/`tracestate` headers. Call only when tracing.
 */
export function startHttpSpan(req: IncomingMessage, path: string): HttpSpan {
  const method = req.method ?? "GET";
  const parent = contextFrom(req.headers as Record<string, unknown>, ROOT_CONTEXT);
  const span = tracer().startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { "http.request.method": method, "url.path": path, "url.scheme": "http", "network.protocol.name": "http" } },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** Ends the span with what the log line says: the route, the status and the principal (masked as the logs mask it). */
export function endHttpSpan(http: HttpSpan, end: { method: string; route: string; path: string; status: number; principal: string | undefined }): void {
  const { span } = http;
  // Named for codemux's route, never the raw path: REST paths name tools, and span names must stay few.
  span.updateName(`${end.method} ${end.route}`);
  if (FIXED_ROUTES.has(end.route)) span.setAttribute("http.route", end.path);
  span.setAttribute("http.response.status_code", end.status);
  if (end.principal !== undefined) span.setAttribute("enduser.id", redactSecrets(end.principal));
  if (end.status >= 500) {
    span.setAttribute("error.type", String(end.status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** Routes served at one path each, which is then the span's `http.route`. */
const FIXED_ROUTES = new Set(["mcp", "sse", "messages", "metrics", "readyz"]);

/** The ids a log line carries to be found in the trace. */
export function traceIds(http: HttpSpan): { traceId: string; spanId: string } {
  const { traceId, spanId } = http.span.spanContext();
  return { traceId, spanId };
}
