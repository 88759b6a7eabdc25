import { describe, expect, it } from "vitest";
import { stopWaitMs } from "./stop";

describe("codemux stop's wait before SIGKILL", () => {
  it("outlasts the server's drain: its --drain-ms when it was started with one, else the default", () => {
    expect(stopWaitMs(["serve", "--http", ":0", "--detach"])).toBe(30_000 + 10_000 + 5_000);
    expect(stopWaitMs(["serve", "--http", ":0", "--drain-ms", "120000"])).toBe(120_000 + 15_000);
    expect(stopWaitMs(["serve", "--drain-ms=5000"])).toBe(5_000 + 15_000);
    expect(stopWaitMs(["serve", "--drain-ms"])).toBe(45_000);
  });
});
