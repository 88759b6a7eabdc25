import { until } from "@codemux/test-servers";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../src/options";
import { serve } from "./helpers";

/** `logLevel`: a request log line below it is never built (its plugin fields are not asked for either). */
describe("the request log at a log level", () => {
  const requestsCounted = (text: string) => /codemux_http_requests_total\{route="other",status="200"\} (\d+)/.exec(text)?.[1];

  it.each([
    [undefined, 1],
    ["info", 1],
    ["warn", 0],
    ["error", 0],
  ] as const)("at %s, a successful request's line is built and written %i time(s)", async (logLevel, lines) => {
    const s = await serve(logLevel ? { logLevel } : {});
    try {
      let built = 0;
      s.http.addLogFields(() => {
        built += 1;
        return { tenant: "acme" };
      });
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      // The request is counted when its line would be written, in the same step.
      await until(() => requestsCounted(s.http.metrics.render()) === "1");
      expect(built).toBe(lines);
      expect(s.logs.filter((record) => record.msg === "request")).toHaveLength(lines);
    } finally {
      await s.close();
    }
  });

  it("refuses a level it does not know", () => {
    expect(() => resolveOptions({ logLevel: "loud" as never }, () => undefined)).toThrow(/logLevel must be one of error, warn, info, debug/);
  });
});
