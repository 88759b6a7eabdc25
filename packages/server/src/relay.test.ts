import type { ToolResult as CallToolResult } from "@codemux/core";
import { describe, expect, it } from "vitest";
import { LATE_REQUEST_WINDOW_MS } from "./defaults";
import type { CallContext, ClientPeer, SessionInfo } from "@codemux/core";
import { ClientRelay } from "./relay";

/** A relay on a clock the test moves, and calls on it that stay in flight until ended. */
function harness() {
  let now = 1_000_000;
  const relay = new ClientRelay({ roots: (server) => [{ uri: `file:///srv/${server}` }], clock: () => now });
  const track = relay.middleware();
  const start = (server: string, session: SessionInfo) => {
    let end: () => void = () => undefined;
    const done = track(
      { entry: { server }, session } as unknown as CallContext,
      () => new Promise<CallToolResult>((resolve) => (end = () => resolve({ content: [] }))),
    );
    return async () => {
      end();
      await done;
    };
  };
  return { relay, start, advance: (ms: number) => void (now += ms) };
}

const alice: SessionInfo = { id: "a1", principal: "alice" };
const bob: SessionInfo = { id: "b1", principal: "bob" };
const refusal = (attribution: ReturnType<ClientRelay["attribute"]>) => ("refused" in attribution ? attribution.refused : "attributed");

describe("ClientRelay.attribute", () => {
  it("names the one session in flight, and no one outside calls or while two are in flight", async () => {
    const { relay, start } = harness();
    expect(refusal(relay.attribute("s"))).toBe("s sent it outside any call");
    const endA = start("s", alice);
    expect(relay.attribute("s")).toEqual({ session: alice });
    const endB = start("s", bob);
    expect(refusal(relay.attribute("s"))).toMatch(/calls of 2 clients were in flight/);
    await endA();
    await endB();
  });

  it("refuses while one 2026-07-28 client has two requests in flight (they share a session but not a peer), and names it with one", async () => {
    const { relay, start } = harness();
    const peer = { era: "modern" } as SessionInfo["peer"];
    const modern: SessionInfo = { id: "m1", principal: "carol", peer };
    const first = start("s", modern);
    expect(relay.attribute("s")).toEqual({ session: modern });
    const second = start("s", { ...modern });
    expect(refusal(relay.attribute("s"))).toBe(
      "s sent it while 2 requests of one 2026-07-28 client were in flight on it, so codemux cannot tell which request it is for",
    );
    await first();
    await second();
  });

  it("refuses while another principal's call ended in the window before, or at any time during, the caller's calls", async () => {
    const { relay, start, advance } = harness();
    await (await start("s", alice))();
    advance(LATE_REQUEST_WINDOW_MS - 1);
    const endB = start("s", bob);
    expect(refusal(relay.attribute("s"))).toMatch(/another client's call on it ended/);
    await endB();
    advance(2);
    const endLong = start("s", bob);
    expect(relay.attribute("s")).toEqual({ session: bob });
    // Alice's call ends during bob's long one; bob's own calls ending long after must not make the relay forget it.
    await (await start("s", alice))();
    for (let i = 0; i < 5; i++) {
      advance(LATE_REQUEST_WINDOW_MS);
      await (await start("s", { id: "b2", principal: "bob" }))();
    }
    expect(refusal(relay.attribute("s"))).toMatch(/another client's call on it ended/);
    await endLong();
  });

  it("refuses another principal's question for at most two seconds after a call ended", async () => {
    const { relay, start, advance } = harness();
    await (await start("s", alice))();
    advance(2_001);
    const endB = start("s", bob);
    expect(relay.attribute("s")).toEqual({ session: bob });
    await endB();
  });

  it("names the call a question says it is about (its request's own stream), whatever else is in flight", async () => {
    const { relay, start } = harness();
    const own = { ...alice };
    const endA = start("s", own);
    const endB = start("s", bob);
    expect(relay.attribute("s", { caller: own })).toEqual({ session: own });
    expect(relay.attribute("s", { caller: bob })).toEqual({ session: bob });
    // A session like it is not the one the request was made with.
    expect(refusal(relay.attribute("s", { caller: { ...alice } }))).toBe("s sent it about a request that has ended");
    await endA();
    expect(refusal(relay.attribute("s", { caller: own }))).toBe("s sent it about a request that has ended");
    await endB();
  });

  it("does not count a call waiting for its client's answer (a parked one too): another principal's call then gets the next question", async () => {
    const { relay, start } = harness();
    let answer!: () => void;
    const waiting = new Promise<void>((resolve) => (answer = resolve));
    const peer: ClientPeer = {
      capabilities: () => ({ elicitation: {} }),
      elicit: async () => {
        await waiting;
        return { action: "accept" };
      },
      createMessage: () => Promise.reject(new Error("not asked")),
      listRoots: () => Promise.reject(new Error("not asked")),
    };
    const asker: SessionInfo = { ...alice, peer };
    const endA = start("s", asker);
    const asked = relay.handle("s", { method: "elicitation/create", params: { message: "alice's" } }, { signal: new AbortController().signal });
    const endB = start("s", bob);
    // Its turn (the server now takes turns) comes once pending callbacks have run.
    await new Promise((resolve) => setImmediate(resolve));
    expect(relay.attribute("s")).toEqual({ session: bob });
    answer();
    expect(await asked).toEqual({ action: "accept" });
    expect(refusal(relay.attribute("s"))).toMatch(/calls of 2 clients were in flight/);
    await endA();
    await endB();
  });

  it("answers a shared server's roots from the config and refuses a question during a call with no client", async () => {
    const { relay, start } = harness();
    const signal = new AbortController().signal;
    expect(await relay.handle("fs", { method: "roots/list" }, { signal })).toEqual({ roots: [{ uri: "file:///srv/fs" }] });
    const end = start("fs", { id: "rest-1", principal: "carol" });
    await expect(relay.handle("fs", { method: "elicitation/create", params: {} }, { signal })).rejects.toThrow(/no MCP client to ask \(a REST call or a job\)/);
    await end();
  });
});
