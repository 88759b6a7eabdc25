import { describe, expect, it } from "vitest";
import { retentionFor, retentionOf } from "./retention";

describe("the config's retention", () => {
  it("reads times for everyone and for named principals, and answers a principal's own first", () => {
    const retention = retentionOf({ retention: { jobsMs: 1000, auditMs: 5000, principals: { "token:ci": { jobsMs: 10 } } } }, "c.json");
    expect(retentionFor(retention, "jobsMs", "token:ci")).toBe(10);
    expect(retentionFor(retention, "auditMs", "token:ci")).toBe(5000);
    expect(retentionFor(retention, "jobsMs", "token:alice")).toBe(1000);
    expect(retentionFor(retention, "resultsMs", "token:alice")).toBeUndefined();
    // A principal named like a property of every object is just a name.
    expect(retentionFor(retention, "jobsMs", "constructor")).toBe(1000);
    expect(retentionOf({}, "c.json")).toBeUndefined();
  });

  it("refuses what it cannot use with the key and the rule", () => {
    expect(() => retentionOf({ retention: { jobs: 5 } }, "c.json")).toThrow(
      'Invalid config c.json: retention.jobs: unknown setting (did you mean "jobsMs"?); retention takes resultsMs, jobsMs, auditMs, principals.',
    );
    expect(() => retentionOf({ retention: { jobsMs: 0 } }, "c.json")).toThrow(/retention.jobsMs: expected a whole number of milliseconds from 1/);
    expect(() => retentionOf({ retention: { principals: { "token:ci": { auditMs: "7d" } } } }, "c.json")).toThrow(
      /retention.principals."token:ci".auditMs: expected a whole number/,
    );
    expect(() => retentionOf({ retention: { principals: [] } }, "c.json")).toThrow(/retention.principals: expected an object of principal ids/);
  });
});
