import { describe, expect, it } from "vitest";
import { jobsSettingsOf } from "./jobs-settings";

describe("the config's jobs block", () => {
  it("reads maxRunMs, how long a background snippet may wait on tools", () => {
    expect(jobsSettingsOf({ jobs: { maxRunMs: 3_600_000 } }, "codemux.json")).toEqual({ maxRunMs: 3_600_000 });
    expect(jobsSettingsOf({}, "codemux.json")).toEqual({});
  });

  it("refuses a value out of bounds or a misspelt key with a sentence naming the file and the setting", () => {
    expect(() => jobsSettingsOf({ jobs: { maxRunMs: "30m" } }, "codemux.json")).toThrow(
      /Invalid config codemux\.json: jobs\.maxRunMs: expected a whole number of milliseconds from 1000 to 86400000 \(a day\)/,
    );
    expect(() => jobsSettingsOf({ jobs: { maxRunMS: 1000 } }, "codemux.json")).toThrow(/jobs\.maxRunMS: unknown setting \(did you mean "maxRunMs"\?\)/);
  });
});
