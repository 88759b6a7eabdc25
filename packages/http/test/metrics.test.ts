import { describe, expect, it } from "vitest";
import type { CallContext, ToolResult } from "@codemux/core";
import { callMetricsMiddleware, Counter, Histogram, Metrics } from "../src/metrics";

describe("metric labels", () => {
  it("are escaped as Prometheus' text format asks (backslash, newline, double quote), and plain ones are kept as they are", () => {
    const counter = new Counter("t_total", "test");
    counter.inc({ tool: 'a\\b\n"c"' });
    counter.inc({ tool: "m__echo" });
    expect(counter.render()).toEqual(["# HELP t_total test", "# TYPE t_total counter", 't_total{tool="a\\\\b\\n\\"c\\""} 1', 't_total{tool="m__echo"} 1']);
  });

  it("are written in name order whatever order they were given in, and one order or another is one series", () => {
    const counter = new Counter("t_total", "test");
    counter.inc({ status: "200", route: "mcp", method: "POST" });
    counter.inc({ method: "POST", route: "mcp", status: "200" });
    counter.inc({ route: "mcp", method: "POST", status: "200" });
    counter.inc({ b: "2", a: "1" });
    counter.inc();
    expect(counter.render().slice(2)).toEqual(['t_total{method="POST",route="mcp",status="200"} 3', 't_total{a="1",b="2"} 1', "t_total 1"]);
  });

  it("keep a value's first 200 characters: values that differ only past them share one series", () => {
    const histogram = new Histogram("t_seconds", "test", [1]);
    const long = "x".repeat(200);
    histogram.observe({ route: `${long}a` }, 0.5);
    histogram.observe({ route: `${long}b` }, 0.5);
    expect(histogram.render()).toContain(`t_seconds_count{route="${long}"} 2`);
  });
});

describe("callMetricsMiddleware", () => {
  const ctx = { entry: { server: "m" }, origin: "call_tool" } as unknown as CallContext;
  const ok: ToolResult = { content: [{ type: "text", text: "x" }] };

  it("counts calls, errors (an isError result, a rejection, a throw) and latency per server and origin, and hands each outcome on", async () => {
    const metrics = new Metrics();
    const middleware = callMetricsMiddleware(metrics);
    expect(await middleware(ctx, () => Promise.resolve(ok))).toBe(ok);
    expect(await middleware(ctx, () => Promise.resolve({ ...ok, isError: true }))).toMatchObject({ isError: true });
    await expect(middleware(ctx, () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    await expect(
      middleware(ctx, () => {
        throw new Error("at once");
      }),
    ).rejects.toThrow("at once");
    const text = metrics.render();
    expect(text).toContain('codemux_tool_calls_total{origin="call_tool",server="m"} 4');
    expect(text).toContain('codemux_tool_errors_total{origin="call_tool",server="m"} 3');
    expect(text).toContain('codemux_tool_call_duration_seconds_count{server="m"} 4');
  });
});
