import { describe, expect, it } from "vitest";
import { MAX_REQUEST_STATE_BYTES } from "../src/defaults";
import { parkInstanceOf } from "../src/index";
import { RequestStates } from "../src/signed-state";

const states = new RequestStates();

describe("parkInstanceOf: the instance a retry's requestState routes to", () => {
  it("reads the instance of the park a state codemux sealed names, and none from a state naming no park", () => {
    expect(parkInstanceOf(states.seal("token:alice", { tool: "call_tool", park: "codemux-2.8f1c" }))).toBe("codemux-2");
    expect(parkInstanceOf(states.seal("token:alice", { tool: "call_tool", target: "s__t", state: "theirs" }))).toBeUndefined();
  });

  it("reads nothing from hostile states: over the size bound, not codemux's, not JSON, an id no instance can have", () => {
    const sealed = states.seal("token:alice", { tool: "call_tool", park: "a.1", state: "x".repeat(MAX_REQUEST_STATE_BYTES) });
    expect(parkInstanceOf(sealed)).toBeUndefined();
    expect(parkInstanceOf(`cmx1.${Buffer.from('{"park":"a.1"}').toString("base64url")}.mac`)).toBe("a");
    expect(parkInstanceOf(`cmx2.${Buffer.from('{"park":"a.1"}').toString("base64url")}.mac`)).toBeUndefined();
    expect(parkInstanceOf("cmx1.not-json.mac")).toBeUndefined();
    expect(parkInstanceOf(`cmx1.${Buffer.from('{"park":"../evil.1"}').toString("base64url")}.mac`)).toBeUndefined();
    expect(parkInstanceOf({ park: "a.1" })).toBeUndefined();
  });
});
