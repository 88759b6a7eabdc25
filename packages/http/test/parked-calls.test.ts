import { askingServerPath, until } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, askableClient, serve, textOf, type Served } from "./helpers";

const KEY = "a shared key of thirty-two bytes or more";
const asking = { s: { command: process.execPath, args: [askingServerPath] } };

const call = (name: string, args: Record<string, unknown> = {}) => ({ name: "call_tool", arguments: { name: `s__${name}`, args } });
type Asked = { resultType?: string; inputRequests?: Record<string, { method: string; params: { message: string } }>; requestState?: string };

describe("a 2025 server that asks mid-call, under 2026-07-28 clients", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({}, asking, { stateKey: KEY, parkedCallTtlMs: 1_000 });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("completes through a parked call: the question goes up as input_required, and the retry answers it and gets the result", async () => {
    const client = await askableClient(s.url, TOKENS.alice, "parked answer");
    try {
      const result = await client.callTool(call("ask", { message: "asked mid-call" }));
      expect(JSON.parse(textOf(result))).toEqual({ action: "accept", content: { answer: "parked answer" } });
      expect(s.core.sessions.parkedCalls.size).toBe(0);
    } finally {
      await client.close();
    }
  });

  it("refuses another principal's retry of a parked call, and a retry that reaches another instance says where the call lives", async () => {
    const [alice, bob] = await Promise.all([askableClient(s.url, TOKENS.alice), askableClient(s.url, TOKENS.bob)]);
    const other = await serve({}, asking, { stateKey: KEY });
    const elsewhere = await askableClient(other.url, TOKENS.alice);
    try {
      const asked = (await alice.callTool(call("ask", { message: "alice's" }), { allowInputRequired: true })) as Asked;
      expect(asked.resultType).toBe("input_required");
      const [key, question] = Object.entries(asked.inputRequests ?? {})[0] ?? [];
      expect(question).toMatchObject({ method: "elicitation/create", params: { message: "alice's" } });
      const retry = {
        ...call("ask", { message: "alice's" }),
        inputResponses: { [key as string]: { action: "accept", content: { answer: "x" } } },
        requestState: asked.requestState,
      };
      await expect(bob.callTool(retry)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("not issued to this caller") });
      await expect(elsewhere.callTool(retry)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(
          /the parked call lives on codemux instance \w+, not this one: send the retry there, or, if that instance is gone, call the tool again \(the call ended with it\)/,
        ),
      });
      expect(JSON.parse(textOf(await alice.callTool(retry)))).toEqual({ action: "accept", content: { answer: "x" } });
    } finally {
      await Promise.all([alice.close(), bob.close(), elsewhere.close()]);
      await other.close();
    }
  });

  it("cancels a park not resumed in time: its question is answered with a cancel, and nothing is left running downstream", async () => {
    const client = await askableClient(s.url, TOKENS.alice);
    try {
      const asked = (await client.callTool(call("ask", { message: "never answered" }), { allowInputRequired: true })) as Asked;
      expect(asked.resultType).toBe("input_required");
      expect(textOf(await client.callTool(call("inflight")))).toBe("2");
      await until(() => s.core.sessions.parkedCalls.size === 0);
      await until(async () => textOf(await client.callTool(call("inflight"))) === "1");
      const late = {
        ...call("ask", { message: "never answered" }),
        inputResponses: { q1: { action: "accept", content: {} } },
        requestState: asked.requestState,
      };
      await expect(client.callTool(late)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("the parked call it names ended or expired"),
      });
    } finally {
      await client.close();
    }
  });

  it("does not hold up the server's other callers while parked, once that server gets one call at a time", async () => {
    // The default time to retry (5 minutes): a parked call that kept its turn would hold bob's call that long.
    const patient = await serve({}, asking, { stateKey: KEY });
    const [answering, alice, bob] = await Promise.all([
      askableClient(patient.url, TOKENS.alice, "yes"),
      askableClient(patient.url, TOKENS.alice),
      askableClient(patient.url, TOKENS.bob),
    ]);
    try {
      // Its first question, answered: from now on the server gets one call at a time.
      expect(JSON.parse(textOf(await answering.callTool(call("ask", { message: "first" }))))).toMatchObject({ action: "accept" });
      expect(((await alice.callTool(call("ask", { message: "parked" }), { allowInputRequired: true })) as Asked).resultType).toBe("input_required");
      expect(patient.core.sessions.parkedCalls.size).toBe(1);
      expect(textOf(await bob.callTool(call("slow", { ms: 1 })))).toBe("slept");
    } finally {
      await Promise.all([answering.close(), alice.close(), bob.close()]);
      await patient.close();
    }
  });
});
