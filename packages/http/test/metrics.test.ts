import { describe, expect, it } from "vitest";
import { Counter, Histogram } from "../src/metrics";

describe("metric labels", () => {
  it("are escaped as Prometheus' text format asks (backslash, newline, double quote), and plain ones are kept as they are", () => {
    const counter = new Counter("t_total", "test");
    counter.inc({ tool: 'a\\b\n"c"' });
    counter.inc({ tool: "m__echo" });
    expect(counter.render()).toEqual(["# HELP t_total test", "# TYPE t_total counter", 't_total{tool="a\\\\b\\n\\"c\\""} 1', 't_total{tool="m__echo"} 1']);
  });

  it("keep a value's first 200 characters: values that differ only past them share one series", () => {
    const histogram = new Histogram("t_seconds", "test", [1]);
    const long = "x".repeat(200);
    histogram.observe({ route: `${long}a` }, 0.5);
    histogram.observe({ route: `${long}b` }, 0.5);
    expect(histogram.render()).toContain(`t_seconds_count{route="${long}"} 2`);
  });
});
