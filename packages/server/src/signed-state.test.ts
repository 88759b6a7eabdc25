import { describe, expect, it } from "vitest";
import { RequestStates } from "./signed-state";

describe("RequestStates", () => {
  const claims = { tool: "call_tool", target: "m__ask", state: "the server's" };

  it("opens its own state for the principal and tool it was sealed for, and keeps the server's state as it was", () => {
    const states = new RequestStates();
    expect(states.open("token:a", "call_tool", states.seal("token:a", claims))).toEqual(claims);
  });

  it("refuses a state past its expiry", () => {
    let now = 1_000;
    const states = new RequestStates({ ttlMs: 100, clock: () => now });
    const sealed = states.seal("token:a", claims);
    now += 101;
    expect(() => states.open("token:a", "call_tool", sealed)).toThrow("codemux refused the retry's requestState: it expired.");
  });

  it("refuses another instance's state unless the instances share the key", () => {
    const key = "k".repeat(32);
    const sealed = new RequestStates({ key }).seal("token:a", claims);
    expect(new RequestStates({ key }).open("token:a", "call_tool", sealed)).toEqual(claims);
    expect(() => new RequestStates().open("token:a", "call_tool", sealed)).toThrow(/not issued to this caller, or it was altered/);
  });

  it("refuses an oversized or foreign state before reading it, and a key shorter than 32 bytes", () => {
    const states = new RequestStates();
    expect(() => states.open("token:a", "call_tool", "x".repeat(70_000))).toThrow(/longer than 65536 characters/);
    expect(() => states.open("token:a", "call_tool", "ask:hi")).toThrow(/codemux did not issue it/);
    expect(() => new RequestStates({ key: "short" })).toThrow(/at least 32 bytes/);
  });
});
