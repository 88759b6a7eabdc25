import { modernServerPath } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, askableClient, serve, textOf, type Served } from "./helpers";

const ask = (message: string) => ({ name: "call_tool", arguments: { name: "m__ask", args: { message } } });
type Asked = { resultType?: string; inputRequests?: Record<string, { method: string; params: { message: string } }>; requestState?: string };

describe("a 2026 server's questions under 2026-07-28 clients", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({}, { m: { command: process.execPath, args: [modernServerPath, "--legacy", "reject"] } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("go up as the call's own input_required, and the SDK client's retry through codemux completes the call", async () => {
    const client = await askableClient(s.url, TOKENS.alice, "alice's answer");
    try {
      const result = await client.callTool(ask("ready?"));
      expect(JSON.parse(textOf(result as never))).toEqual({ asked: "ready?", answer: { action: "accept", content: { answer: "alice's answer" } } });
    } finally {
      await client.close();
    }
  });

  it("reach only their own client, with two principals' calls in flight at once on one server", async () => {
    const [alice, bob] = await Promise.all([askableClient(s.url, TOKENS.alice, "alice's"), askableClient(s.url, TOKENS.bob, "bob's")]);
    try {
      const [ra, rb] = await Promise.all([alice.callTool(ask("asked of alice")), bob.callTool(ask("asked of bob"))]);
      expect(JSON.parse(textOf(ra))).toEqual({ asked: "asked of alice", answer: { action: "accept", content: { answer: "alice's" } } });
      expect(JSON.parse(textOf(rb))).toEqual({ asked: "asked of bob", answer: { action: "accept", content: { answer: "bob's" } } });
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });

  it("carry the server's state inside codemux's signed envelope; another principal replaying it is refused with -32602", async () => {
    const [alice, bob] = await Promise.all([askableClient(s.url, TOKENS.alice), askableClient(s.url, TOKENS.bob)]);
    try {
      const asked = (await alice.callTool(ask("alice's secret question"), { allowInputRequired: true })) as Asked;
      expect(asked.resultType).toBe("input_required");
      expect(asked.inputRequests?.q).toMatchObject({ method: "elicitation/create", params: { message: "alice's secret question" } });
      // codemux's own envelope, not the server's state as it was.
      expect(asked.requestState).toMatch(/^cmx1\./);
      expect(asked.requestState).not.toBe("ask:alice's secret question");
      const answers = { q: { action: "accept", content: { answer: "yes" } } };
      const retry = { ...ask("alice's secret question"), inputResponses: answers, requestState: asked.requestState };
      await expect(bob.callTool(retry)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("codemux refused the retry's requestState: it was not issued to this caller, or it was altered."),
      });
      const forged = { ...retry, requestState: `${asked.requestState}x` };
      await expect(alice.callTool(forged)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("it was not issued to this caller, or it was altered"),
      });
      const otherTool = { name: "search_tools", arguments: { query: "x" }, inputResponses: answers, requestState: asked.requestState };
      await expect(alice.callTool(otherTool)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("it was issued for a call of call_tool, not of search_tools"),
      });
      const done = await alice.callTool(retry);
      expect(JSON.parse(textOf(done as never))).toEqual({ asked: "alice's secret question", answer: answers.q });
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });

  it("fail a snippet's call with an error it can catch, saying the question could not be asked; the snippet runs once", async () => {
    const client = await askableClient(s.url, TOKENS.alice, "never asked");
    try {
      const code = [
        'import { ask, counter } from "mcp/servers/m";',
        "const before = await counter({});",
        "let outcome;",
        'try { outcome = await ask({ message: "from a snippet" }); } catch (error) { outcome = { caught: (error as Error).message }; }',
        "export default { before, outcome };",
      ].join("\n");
      const run = JSON.parse(textOf((await client.callTool({ name: "execute_code", arguments: { code } })) as never));
      expect(run.result.outcome.caught).toBe(
        "m__ask needs input (elicitation/create) that codemux could not ask for here: this client speaks MCP 2026-07-28, where only the client's own call can ask. Call m__ask directly with call_tool to answer it.",
      );
      // The snippet's earlier call ran once: the SDK client's retry loop was not set off by it.
      const after = JSON.parse(textOf((await client.callTool({ name: "call_tool", arguments: { name: "m__counter", args: {} } })) as never));
      expect(after.calls).toBe(run.result.before.calls + 2);
    } finally {
      await client.close();
    }
  });
});
