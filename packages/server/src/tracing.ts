import { maskUrl, redactSecrets, type CallRequest, type ToolResult } from "@codemux/core";
import { contextFrom, inSpan, traceCarrier, type DownstreamRequest } from "@codemux/pool";
import { context, SpanKind, SpanStatusCode, type Attributes } from "@opentelemetry/api";

/** Span names and attributes take at most this much of a client's text (a tool name): a hostile name cannot bloat every span. */
const MAX_NAME_CHARS = 200;

export interface InboundCall {
  params: { name: string; _meta?: Record<string, unknown> | undefined };
  requestId: unknown;
  surface: string;
  era: string;
  principal: string;
}

/**
 * One client `tools/call` as a SERVER span (MCP semantic conventions), continuing the trace the request's
 * `_meta` names (`traceparent`, `tracestate`), else the active one (the HTTP request's headers). Call only when tracing.
 */
export function inboundSpan<T>(call: InboundCall, work: () => Promise<T>): Promise<T> {
  const tool = call.params.name.slice(0, MAX_NAME_CHARS);
  const attributes: Attributes = {
    "mcp.method.name": "tools/call",
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": tool,
    "codemux.surface": call.surface,
    "codemux.era": call.era,
    // The principal as the logs show it: secrets in it (a token's text) masked.
    "enduser.id": redactSecrets(call.principal),
  };
  if (call.requestId !== undefined) attributes["jsonrpc.request.id"] = String(call.requestId).slice(0, MAX_NAME_CHARS);
  const meta = call.params._meta;
  const parent = contextFrom(meta !== null && typeof meta === "object" ? meta : undefined, context.active());
  return inSpan(`tools/call ${tool}`, { kind: SpanKind.SERVER, attributes, parent }, (span) =>
    work().then((result) => {
      const outcome = outcomeOf(result);
      span.setAttribute("codemux.outcome", outcome);
      if (outcome === "error") {
        span.setAttribute("error.type", "tool_error");
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return result;
    }),
  );
}

/** How a call ended as a span says it: `ok`, `error` (an error result), `task` (answered with a task) or `input_required`. */
function outcomeOf(result: unknown): string {
  const answer = result as { isError?: unknown; task?: unknown; resultType?: unknown } | undefined;
  if (answer?.isError === true) return "error";
  if (answer?.task !== undefined) return "task";
  if (answer?.resultType === "input_required") return "input_required";
  return "ok";
}

/** One call through the pipeline (any surface's: call_tool, a snippet's, a job's) as an INTERNAL span. Call only when tracing. */
export function pipelineSpan(request: CallRequest, work: () => Promise<ToolResult>): Promise<ToolResult> {
  const name = request.name.slice(0, MAX_NAME_CHARS);
  const attributes: Attributes = { "gen_ai.tool.name": name, "codemux.origin": request.origin, "enduser.id": redactSecrets(request.session.principal) };
  if (request.job !== undefined) attributes["codemux.job"] = request.job;
  return inSpan(`pipeline ${name}`, { attributes }, (span) =>
    work().then((result) => {
      if (result.isError === true) span.setAttribute("error.type", "tool_error");
      return result;
    }),
  );
}

/**
 * A request beyond tools to a downstream server (`resources/read`, `prompts/get`, `completion/complete`) as a
 * CLIENT span, whose context the request carries in its `_meta` (`traceparent`, `tracestate`) as a call's does. The
 * prompt's name and the resource's URI (secrets masked) name it; argument values are never recorded. Call only when tracing.
 */
export function downstreamRequestSpan<T>(server: string, request: DownstreamRequest, send: (request: DownstreamRequest) => Promise<T>): Promise<T> {
  const { method, params } = request;
  const attributes: Attributes = { "mcp.method.name": method, "codemux.server": server };
  let target: string | undefined;
  if (method === "prompts/get" && typeof params.name === "string") {
    target = params.name.slice(0, MAX_NAME_CHARS);
    attributes["gen_ai.prompt.name"] = target;
  } else if (method === "resources/read" && typeof params.uri === "string") {
    target = redactSecrets(maskUrl(params.uri.slice(0, 2 * MAX_NAME_CHARS))).slice(0, MAX_NAME_CHARS);
    attributes["mcp.resource.uri"] = target;
  }
  return inSpan(target === undefined ? method : `${method} ${target}`, { kind: SpanKind.CLIENT, attributes }, () => {
    const carrier = traceCarrier();
    if (carrier === undefined) return send(request);
    const meta = params._meta !== null && typeof params._meta === "object" ? (params._meta as Record<string, unknown>) : {};
    return send({ method, params: { ...params, _meta: { ...meta, ...carrier } } });
  });
}
