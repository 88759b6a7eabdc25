import { afterEach, describe, expect, it } from "vitest";
import { cachePlugin, type CallRecord, type Plugin } from "@codemux/hooks";
import { connect, misbehaving, type Harness } from "./harness";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("observability hooks", () => {
  it("lets plugins add to metrics counters and to the call's log fields", async () => {
    const counters = new Map<string, number>();
    const records: CallRecord[] = [];
    const tagger: Plugin = {
      name: "tagger",
      init: (ctx) => ctx.metrics.increment("tagger_started_total"),
      beforeCall: (call) => call.logField("team", "billing"),
    };
    const broken: Plugin = {
      name: "broken",
      beforeCall: () => {
        throw new Error("oops");
      },
    };
    harness = await connect({
      servers: { s: misbehaving() },
      plugins: [tagger, broken, cachePlugin({ tools: ["s__echo"] })],
      host: {
        observability: {
          metrics: {
            increment: (name, labels) =>
              void counters.set(`${name}${labels ? JSON.stringify(labels) : ""}`, (counters.get(`${name}${labels ? JSON.stringify(labels) : ""}`) ?? 0) + 1),
          },
          onCall: (record) => void records.push(record),
        },
      },
    });
    await harness.call("s__echo", { text: "a" });
    await harness.call("s__echo", { text: "a" });
    expect(counters.get("tagger_started_total")).toBe(1);
    expect(counters.get('codemux_cache_hits_total{"server":"s"}')).toBe(1);
    expect(counters.get('codemux_plugin_failures_total{"plugin":"broken","hook":"beforeCall"}')).toBe(2);
    expect(records.map((r) => [r.name, r.origin, r.outcome, r.fields])).toEqual([
      ["s__echo", "passthrough", "ok", { team: "billing" }],
      ["s__echo", "passthrough", "ok", { team: "billing", cache: "hit" }],
    ]);
  });

  it("can be attached after start (when HTTP serving begins)", async () => {
    const records: CallRecord[] = [];
    harness = await connect({ servers: { s: misbehaving() }, plugins: [{ name: "noop", beforeCall: () => undefined }] });
    await harness.call("s__echo", { text: "a" });
    harness.plugins.observe({ onCall: (record) => void records.push(record) });
    await harness.call("s__echo", { text: "b" });
    expect(records).toHaveLength(1);
  });
});
