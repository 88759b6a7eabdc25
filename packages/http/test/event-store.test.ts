import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { BoundedEventStore } from "../src/index";

const note = (n: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: n } });

describe("BoundedEventStore", () => {
  it("replays the events of one stream after the given id, and forgets the oldest past its bounds", async () => {
    const store = new BoundedEventStore({ maxEvents: 3 });
    const a1 = await store.storeEvent("a", note(1));
    await store.storeEvent("b", note(2));
    await store.storeEvent("a", note(3));
    const sent: unknown[] = [];
    expect(await store.replayEventsAfter(a1, { send: async (_id, m) => void sent.push(m) })).toBe("a");
    expect(sent).toEqual([note(3)]);
    await store.storeEvent("a", note(4));
    expect(store.size).toBe(3);
    expect(await store.getStreamIdForEventId(a1)).toBeUndefined();
    const bytes = new BoundedEventStore({ maxBytes: 2000 });
    for (let i = 0; i < 100; i++) await bytes.storeEvent("s", note(i));
    expect(bytes.size).toBeLessThan(100);
  });
});
