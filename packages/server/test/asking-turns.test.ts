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

/** A 2025-era client session of `principal` that answers each question with `answer` once `ready()` resolves, recording what it was asked. */
async function caller(principal: string, answer: string, ready: () => Promise<void>): Promise<{ client: Client; asked: string[] }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions, { session: core.session(principal) }).connect(serverSide);
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

const call = (client: Client, tool: string, args: Record<string, unknown>) =>
  client.callTool({ name: "call_tool", arguments: { name: `s__${tool}`, args } }) as Promise<CallToolResult>;
const ask = (client: Client, message: string) => call(client, "ask", { message });

describe("a shared 2025 server that has asked, over stdio (it cannot say which call a question is for)", () => {
  it("gives a principal's calls one turn at a time, and a call waiting for its answer gives its turn back: each question reaches its own session", async () => {
    const a = await caller("local", "A's", async () => {
      // A's second question stays open until B's call (same principal) has been asked: B's call did not wait for A's answer.
      if (a.asked.length > 1) await until(() => b.asked.length === 1);
    });
    const b = await caller("local", "B's", async () => undefined);
    try {
      // Its first question, with one caller in flight: from now on the server takes turns.
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

  it("lets a principal's queued call be cancelled while it waits for the turn; another principal's calls never wait", async () => {
    const [a, b, other] = await Promise.all([
      caller("local", "yes", async () => undefined),
      caller("local", "yes", async () => undefined),
      caller("token:other", "yes", async () => undefined),
    ]);
    try {
      // The server has asked before (the test above): A's call holds its principal's turn until it is released.
      const held = call(a.client, "hold", { key: "a" });
      await until(async () => textOf(await call(other.client, "inflight", {})) === "2");
      const cancel = new AbortController();
      const fromB = b.client.callTool({ name: "call_tool", arguments: { name: "s__slow", args: { ms: 1 } } }, undefined, { signal: cancel.signal });
      await until(() => core.relay.waiting("s") === 1);
      // Another principal's calls run meanwhile: this one releases A's.
      expect(textOf(await call(other.client, "slow", { ms: 1 }))).toBe("slept");
      cancel.abort(new Error("the user gave up"));
      await expect(fromB).rejects.toThrow(/the user gave up/);
      await until(() => core.relay.waiting("s") === 0);
      expect(textOf(await call(other.client, "release", { key: "a" }))).toBe("1");
      expect(textOf(await held)).toBe("released");
      expect(textOf(await call(b.client, "slow", { ms: 1 }))).toBe("slept");
    } finally {
      await Promise.all([a.client.close(), b.client.close(), other.client.close()]);
    }
  });
});

describe("a shared 2025 server whose question no client could answer", () => {
  it("does not take turns from then on: a principal's second call runs beside its first", async () => {
    const fresh = new Codemux({ config: config({ s: node(askingServerPath) }) });
    fresh.start();
    await fresh.ready(10_000);
    try {
      const rest = await fresh
        .surface("code")
        .callTool("call_tool", { name: "s__ask", args: { message: "over REST" } }, { session: fresh.session(), origin: "rest" });
      expect(textOf(rest as CallToolResult)).toMatch(/no MCP client to ask/);
      const alice = fresh.session("token:alice");
      const run = (tool: string, args: Record<string, unknown>) =>
        fresh.surface("code").callTool("call_tool", { name: `s__${tool}`, args }, { session: alice, origin: "rest" }) as Promise<CallToolResult>;
      const held = run("hold", { key: "refused" });
      expect(textOf(await run("slow", { ms: 1 }))).toBe("slept");
      expect(textOf(await run("release", { key: "refused" }))).toBe("1");
      expect(textOf(await held)).toBe("released");
    } finally {
      await fresh.close();
    }
  });
});
