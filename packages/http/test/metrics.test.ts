import { describe, expect, it } from "vitest";
import { Counter, Histogram } from "../src/metrics";

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
