import { VERSION } from "@codemux/server";

/**
 * Whether the standard OpenTelemetry variables ask for traces: `OTEL_TRACES_EXPORTER` naming `otlp`, or an
 * OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) with no exporter named;
 * never with `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 */
export function wantsTracing(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(",").map((name) => name.trim().toLowerCase());
  if (exporters !== undefined && exporters.some((name) => name !== "")) return exporters.includes("otlp");
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Registers the OpenTelemetry SDK with the OTLP/HTTP exporter (JSON) when the environment asks for traces, and
 * resolves with the function that flushes and stops it; undefined, having loaded none of it, otherwise.
 * The exporter reads its own variables (endpoint, headers, timeout), and the batch processor its `OTEL_BSP_*`.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<(() => Promise<void>) | undefined> {
  if (!wantsTracing(env)) return undefined;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, { detectResources, envDetector, resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over codemux's own name.
  const resource = resourceFromAttributes({ "service.name": "codemux", "service.version": VERSION }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  // The W3C trace-context propagator and the AsyncLocalStorage context manager, as the libraries expect.
  provider.register();
  return () => provider.shutdown();
}
