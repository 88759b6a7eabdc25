import { afterEach, describe, expect, it } from "vitest";
import { rateLimitPlugin } from "@codemux/hooks";
import { connect, misbehaving, textOf, type Harness } from "./harness";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("rate-limit", () => {
  it("refuses past the bucket, says when to retry, and lets calls through again once tokens refill", async () => {
    let now = 5_000_000;
    harness = await connect({
      servers: { s: misbehaving() },
      plugins: [rateLimitPlugin({ limits: [{ by: ["principal"], calls: 2, perMs: 60_000 }] })],
      host: { clock: () => now },
    });
    expect(textOf(await harness.call("s__echo", { text: "1" }))).toBe("1");
    expect(textOf(await harness.call("s__echo", { text: "2" }))).toBe("2");
    const refused = await harness.call("s__echo", { text: "3" });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe('Rate limited: at most 2 calls per 60 s for principal "local". s__echo was not called; retry in 30 s.');
    now += 29_000;
    expect(textOf(await harness.call("s__echo", { text: "4" }))).toMatch(/retry in 1 s/);
    now += 1_000;
    expect(textOf(await harness.call("s__echo", { text: "5" }))).toBe("5");
  });

  it("keeps one bucket per tool when asked, so a busy tool does not starve the others", async () => {
    harness = await connect({
      servers: { s: misbehaving() },
      plugins: [rateLimitPlugin({ limits: [{ by: ["principal", "tool"], calls: 1, perMs: 3_600_000, tools: ["s__echo", "s__counter"] }] })],
    });
    expect(textOf(await harness.call("s__echo", { text: "a" }))).toBe("a");
    expect(textOf(await harness.call("s__echo", { text: "b" }))).toMatch(/Rate limited: .*tool s__echo/);
    expect(textOf(await harness.call("s__counter"))).toContain("calls");
    expect(textOf(await harness.call("s__structured", { n: 1 }))).toContain("doubled");
  });

  it("does not count a refused call", async () => {
    let now = 0;
    harness = await connect({
      servers: { s: misbehaving() },
      plugins: [rateLimitPlugin({ limits: [{ by: ["server"], calls: 1, perMs: 1000 }] })],
      host: { clock: () => now },
    });
    await harness.call("s__echo", { text: "a" });
    for (let i = 0; i < 5; i++) expect((await harness.call("s__echo", { text: "b" })).isError).toBe(true);
    now += 1000;
    expect(textOf(await harness.call("s__echo", { text: "c" }))).toBe("c");
  });
});
