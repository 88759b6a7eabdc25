import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { LaneChannel } from "../src/lane-channel";
import type { SdkChannel } from "../src/sdk-channel";

/** A transport whose sends answer with the promise the test gives, so that several sends can share one write. */
function fakeTransport(): { transport: Transport; sent: JSONRPCMessage[]; next: { promise: Promise<void> } } {
  const sent: JSONRPCMessage[] = [];
  const next = { promise: Promise.resolve() };
  const transport: Transport = {
    start: async () => undefined,
    close: async () => undefined,
    send: (message) => {
      sent.push(message);
      return next.promise;
    },
  };
  return { transport, sent, next };
}

const call = (name: string) => ({ name, arguments: {}, timeoutMs: 10_000 });

describe("the call lane's writes", () => {
  it("fails exactly the calls whose shared write failed, each with the write's error", async () => {
    const { transport, sent, next } = fakeTransport();
    const lane = new LaneChannel({} as SdkChannel, transport);
    let fail: (error: Error) => void = () => undefined;
    next.promise = new Promise<void>((_, reject) => {
      fail = reject;
    });
    const first = [lane.callTool(call("a")), lane.callTool(call("b"))];
    next.promise = Promise.resolve();
    const other = lane.callTool(call("c"));
    const broken = new Error("EPIPE");
    fail(broken);
    for (const call of first) await expect(call).rejects.toBe(broken);
    expect(lane.pending).toBe(1);
    const id = (sent[2] as { id: string }).id;
    transport.onmessage?.({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "ok" }] } });
    await expect(other).resolves.toEqual({ content: [{ type: "text", text: "ok" }] });
    expect(lane.pending).toBe(0);
  });
});
