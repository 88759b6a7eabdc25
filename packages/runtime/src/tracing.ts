import { VERSION, type TracingSettings } from "@codemux/server";

/**
 * Whether the standard OpenTelemetry variables ask for traces: `OTEL_TRACES_EXPORTER` naming `otlp`, or an
 * OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) with no exporter named;
 * or the config's `tracing.enabled`, unless an exporter other than `otlp` is named; never with
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 */
export function wantsTracing(env: NodeJS.ProcessEnv = process.env, settings?: TracingSettings): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(",").map((name) => name.trim().toLowerCase());
  if (exporters !== undefined && exporters.some((name) => name !== "")) return exporters.includes("otlp");
  return settings?.enabled === true || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** The running provider's stop (flush, then shut down), once tracing has started in this process. */
let running: (() => Promise<void>) | undefined;

/**
 * Registers the OpenTelemetry SDK with the OTLP/HTTP exporter (JSON) when the environment (or the config's
 * `tracing`) asks for traces, once per process; resolves with whether tracing is on, having loaded none of it when
 * not. The exporter reads its own variables (endpoint, headers, timeout), which win over the config's `endpoint`,
 * and the batch processor its `OTEL_BSP_*`; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over `serviceName`.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env, settings?: TracingSettings): Promise<boolean> {
  if (running) return true;
  if (!wantsTracing(env, settings)) return false;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, { detectResources, envDetector, resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  if (running) return true;
  const named = { "service.name": settings?.serviceName ?? "codemux", "service.version": VERSION };
  const resource = resourceFromAttributes(named).merge(detectResources({ detectors: [envDetector] }));
  const fromEnv = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
  const endpoint = settings?.endpoint && !fromEnv ? { url: `${settings.endpoint.replace(/\/+$/, "")}/v1/traces` } : undefined;
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter(endpoint))] });
  // The W3C trace-context propagator and the AsyncLocalStorage context manager, as the libraries expect.
  provider.register();
  running = () => provider.shutdown();
  return true;
}

/** Sends the spans still batched and stops tracing; nothing when it never started. */
export async function stopTracing(): Promise<void> {
  const stop = running;
  running = undefined;
  await stop?.();
}
