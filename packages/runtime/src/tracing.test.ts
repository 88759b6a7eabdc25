import { describe, expect, it } from "vitest";
import { wantsTracing } from "./tracing";

describe("wantsTracing", () => {
  it("follows the standard OTEL_* variables", () => {
    expect(wantsTracing({})).toBe(false);
    expect(wantsTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(wantsTracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
    expect(wantsTracing({ OTEL_TRACES_EXPORTER: "otlp" })).toBe(true);
    expect(wantsTracing({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(false);
    expect(wantsTracing({ OTEL_TRACES_EXPORTER: "zipkin" })).toBe(false);
    expect(wantsTracing({ OTEL_SDK_DISABLED: "true", OTEL_TRACES_EXPORTER: "otlp" })).toBe(false);
    expect(wantsTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toBe(false);
  });
});
