import { askingServerPath, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer } from "../src/index";
import { config, node, textOf } from "./helpers";

let core: Codemux;
beforeAll(async () => {
  core = new Codemux({ config: config({ s: node(askingServerPath) }) });
  core.start();
  await core.ready(10_000);
});
afterAll(async () => {
  await core.close();
});

/** A 2025-era client session that answers each question with `answer` once `ready()` resolves, recording what it was asked. */
async function caller(answer: string, ready: () => Promise<void>): Promise<{ client: Client; asked: string[] }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core).connect(serverSide);
  const client = new Client({ name: "caller", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    await ready();
    return { action: "accept", content: { answer } };
  });
  await client.connect(clientSide);
  return { client, asked };
}

const ask = (client: Client, message: string) =>
  client.callTool({ name: "call_tool", arguments: { name: "s__ask", args: { message } } }) as Promise<CallToolResult>;

describe("a 2025 server that has asked", () => {
  it("gets one call at a time, so that each later question reaches the session whose call it is", async () => {
    const a = await caller("A's", async () => {
      // B's call waits for its turn while A's question is open.
      if (core.relay.waiting("s") === 0 && a.asked.length > 1) await until(() => core.relay.waiting("s") === 1);
    });
    const b = await caller("B's", async () => undefined);
    try {
      // Its first question, with one caller in flight: it is now known to ask.
      expect(JSON.parse(textOf(await ask(a.client, "first")))).toEqual({ action: "accept", content: { answer: "A's" } });
      const fromA = ask(a.client, "of A");
      await until(() => a.asked.length === 2);
      const [ra, rb] = await Promise.all([fromA, ask(b.client, "of B")]);
      expect(JSON.parse(textOf(ra))).toEqual({ action: "accept", content: { answer: "A's" } });
      expect(JSON.parse(textOf(rb))).toEqual({ action: "accept", content: { answer: "B's" } });
      expect(a.asked).toEqual(["first", "of A"]);
      expect(b.asked).toEqual(["of B"]);
    } finally {
      await Promise.all([a.client.close(), b.client.close()]);
    }
  });

  it("lets a queued call be cancelled while it waits: the turn still passes on, and later calls run", async () => {
    let answering!: () => void;
    const held = new Promise<void>((resolve) => (answering = resolve));
    const a = await caller("A's", () => held);
    const b = await caller("B's", async () => undefined);
    try {
      // The server has asked before (the test above): A's call holds its turn while A's question is open.
      const fromA = ask(a.client, "held");
      await until(() => a.asked.length === 1);
      const cancel = new AbortController();
      const fromB = b.client.callTool({ name: "call_tool", arguments: { name: "s__slow", args: { ms: 1 } } }, undefined, { signal: cancel.signal });
      await until(() => core.relay.waiting("s") === 1);
      cancel.abort(new Error("the user gave up"));
      await expect(fromB).rejects.toThrow(/the user gave up/);
      await until(() => core.relay.waiting("s") === 0);
      answering();
      expect(JSON.parse(textOf(await fromA))).toEqual({ action: "accept", content: { answer: "A's" } });
      expect(textOf((await b.client.callTool({ name: "call_tool", arguments: { name: "s__slow", args: { ms: 1 } } })) as CallToolResult)).toBe("slept");
    } finally {
      await Promise.all([a.client.close(), b.client.close()]);
    }
  });
});
