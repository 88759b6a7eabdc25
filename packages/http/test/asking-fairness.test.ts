import { askingServerPath, until } from "@codemux/test-servers";
import type { Client as ModernClient } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, askableClient, bearer, serve, textOf, type Served } from "./helpers";

/**
 * Two principals on shared servers that ask (2025 era): one over stdio, which cannot say which call a
 * question is for, and one over Streamable HTTP, which sends each question on its call's own stream.
 * What one principal's calls, parks and refused questions do must not hold up or refuse the other's.
 * Overlap is shown by events (a call that answers while another is still held), never by timings.
 */
const TOKEN_CAROL = "carol-token-0000000000";
let s: Served;
let child: ChildProcess;

beforeAll(async () => {
  child = spawn(process.execPath, [askingServerPath, "--http", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const [chunk] = (await once(child.stdout as NonNullable<ChildProcess["stdout"]>, "data")) as [Buffer];
  const url = `http://127.0.0.1:${/listening (\d+)/.exec(chunk.toString())?.[1]}/mcp`;
  s = await serve(
    { tokens: [...Object.entries(TOKENS).map(([name, token]) => ({ name, token })), { name: "carol", token: TOKEN_CAROL }] },
    { s: { command: process.execPath, args: [askingServerPath] }, p: { command: process.execPath, args: [askingServerPath] }, h: { type: "http", url } },
  );
});
afterAll(async () => {
  await s?.close();
  child?.kill();
});

interface Legacy {
  client: Client;
  /** The questions it was asked (elicitation messages). */
  asked: string[];
  call(tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
}

/** A 2025-era client (SDK 1.x, Streamable HTTP) of `token`'s principal that answers each question with its name's once `ready()` resolves. */
async function legacy(name: string, token: string, ready: (message: string) => Promise<void> = async () => undefined): Promise<Legacy> {
  const client = new Client({ name: "legacy", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    await ready(request.params.message);
    return { action: "accept", content: { answer: `${name}'s` } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(token) } }));
  return {
    client,
    asked,
    call: async (tool, args = {}) => (await client.callTool({ name: "call_tool", arguments: { name: tool, args } })) as CallToolResult,
  };
}

const modernCall = (client: ModernClient, tool: string, args: Record<string, unknown>) =>
  client.callTool({ name: "call_tool", arguments: { name: tool, args } }, { allowInputRequired: true }) as Promise<CallToolResult & { resultType?: string }>;

describe("a shared 2025 server that asks, over stdio (it cannot say which call a question is for)", () => {
  it("lets another principal's plain calls run and answer while one principal's calls run, wait for an answer, or are held", async () => {
    let bobDone = false;
    const alice = await legacy("alice", TOKENS.alice, async (message) => {
      // Her question stays open until bob's call has answered: his call never waits for it.
      if (message === "held open") await until(() => bobDone);
    });
    const bob = await legacy("bob", TOKENS.bob);
    try {
      // Its first question, answered: from now on the server takes turns (per principal).
      expect(textOf(await alice.call("s__ask", { message: "first" }))).toContain("accept");
      const asking = alice.call("s__ask", { message: "held open" });
      const held = [1, 2, 3].map(() => alice.call("s__hold", { key: "alice" }));
      await until(() => alice.asked.includes("held open"));
      expect(textOf(await bob.call("s__slow", { ms: 1 }))).toBe("slept");
      bobDone = true;
      expect(textOf(await asking)).toContain("accept");
      // Alice's own calls took turns: one holds the server, the others wait behind it.
      await until(() => s.core.relay.waiting("s") === 2);
      let released = 0;
      await until(async () => (released += Number(textOf(await bob.call("s__release", { key: "alice" })))) === 3);
      expect((await Promise.all(held)).map(textOf)).toEqual(["released", "released", "released"]);
    } finally {
      await Promise.all([alice.client.close(), bob.client.close()]);
    }
  });

  it("neither refuses nor holds up another principal's calls and questions while a 2026-07-28 client's call is parked", async () => {
    const alice = await askableClient(s.url, TOKENS.alice);
    const bob = await legacy("bob", TOKENS.bob);
    try {
      const parked = await modernCall(alice, "p__ask", { message: "alice's, answered late" });
      expect(parked.resultType).toBe("input_required");
      expect(s.core.sessions.parkedCalls.size).toBe(1);
      // A call of bob's runs and answers meanwhile, and his own question reaches him.
      expect(textOf(await bob.call("p__slow", { ms: 1 }))).toBe("slept");
      expect(JSON.parse(textOf(await bob.call("p__ask", { message: "bob's own" })))).toEqual({ action: "accept", content: { answer: "bob's" } });
      expect(bob.asked).toEqual(["bob's own"]);
      // Alice's retry still finds her call parked and completes it.
      const [key] = Object.keys((parked as { inputRequests?: object }).inputRequests ?? {});
      const retry = {
        name: "call_tool",
        arguments: { name: "p__ask", args: { message: "alice's, answered late" } },
        inputResponses: { [key as string]: { action: "accept", content: { answer: "late" } } },
        requestState: (parked as { requestState?: string }).requestState,
      };
      expect(JSON.parse(textOf(await alice.callTool(retry)))).toEqual({ action: "accept", content: { answer: "late" } });
    } finally {
      await Promise.all([alice.close(), bob.client.close()]);
    }
  });
});

describe("a shared 2025 server over Streamable HTTP (it sends a question on its call's own stream)", () => {
  it("puts each question to the client whose call it came on, while other principals' calls are in flight, without waiting for them", async () => {
    const alice = await legacy("alice", TOKENS.alice);
    const bob = await legacy("bob", TOKENS.bob);
    const carol = await askableClient(s.url, TOKEN_CAROL, "carol's answer");
    try {
      const held = alice.call("h__hold", { key: "h" });
      await until(async () => textOf(await bob.call("h__inflight")) === "2");
      // Alice's call is still held: bob's question (2025 client) and carol's (2026-07-28, through a parked call) reach them.
      expect(JSON.parse(textOf(await bob.call("h__ask", { message: "bob's on his stream" })))).toEqual({ action: "accept", content: { answer: "bob's" } });
      expect(JSON.parse(textOf(await carol.callTool({ name: "call_tool", arguments: { name: "h__ask", args: { message: "carol's" } } })))).toEqual({
        action: "accept",
        content: { answer: "carol's answer" },
      });
      expect(bob.asked).toEqual(["bob's on his stream"]);
      expect(alice.asked).toEqual([]);
      // A question sent on the session's standalone stream names no call: with two principals' calls in flight it is refused, never guessed.
      expect(textOf(await bob.call("h__ask", { message: "on no call's stream", stream: "standalone" }))).toMatch(
        /codemux refused elicitation\/create: h sent it while calls of 2 clients were in flight/,
      );
      expect(textOf(await bob.call("h__release", { key: "h" }))).toBe("1");
      expect(textOf(await held)).toBe("released");
      // It never asked without naming the call while one client could answer: it takes no turns.
      const together = [alice.call("h__hold", { key: "again" }), alice.call("h__hold", { key: "again" })];
      await until(async () => textOf(await alice.call("h__release", { key: "again" })) === "2");
      expect((await Promise.all(together)).map(textOf)).toEqual(["released", "released"]);
    } finally {
      await Promise.all([alice.client.close(), bob.client.close(), carol.close()]);
    }
  });
});
