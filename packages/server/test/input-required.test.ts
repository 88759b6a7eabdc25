import { modernServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer } from "../src/index";
import { config, node, textOf } from "./helpers";

let dir: string;
let core: Codemux;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-input-required-"));
  core = new Codemux({ config: config({ m: node(modernServerPath, "--legacy", "reject") }), dataDir: dir, root: dir });
  core.start();
  await core.ready(10_000);
});
afterAll(async () => {
  await core.close();
  await rm(dir, { recursive: true, force: true });
});

interface Caller {
  client: Client;
  /** The questions this client was asked (elicitation messages, sampling prompts). */
  asked: string[];
  call(tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
}

interface CallerOptions {
  /** Resolves when the client may answer (every question waits for it). */
  ready?: () => Promise<void>;
  capabilities?: { elicitation?: Record<string, never>; sampling?: Record<string, never> };
}

/** A 2025-era client (SDK 1.x) of its own principal, answering each question with `answer` once `ready()` resolves. */
async function legacyCaller(
  principal: string,
  answer: string,
  { ready = async () => undefined, capabilities = { elicitation: {}, sampling: {} } }: CallerOptions = {},
): Promise<Caller> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions, { session: { id: `session-${principal}`, principal } }).connect(serverSide);
  const client = new Client({ name: principal, version: "1.0.0" }, { capabilities });
  const asked: string[] = [];
  if (capabilities.elicitation)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      await ready();
      return { action: "accept", content: { answer } };
    });
  if (capabilities.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(JSON.stringify(request.params.messages[0]?.content).match(/"text":"([^"]*)"/)?.[1] ?? "?");
      await ready();
      return { role: "assistant", model: "test", content: { type: "text", text: answer } };
    });
  await client.connect(clientSide);
  return {
    client,
    asked,
    call: async (tool, args = {}) => (await client.callTool({ name: "call_tool", arguments: { name: `m__${tool}`, args } })) as CallToolResult,
  };
}

describe("a 2026 server's questions (input_required) under 2025-era clients", () => {
  it("reach only the client whose call asked, with two clients' calls in flight at once on one server", async () => {
    // Neither question is answered before both are asked: the two calls are in flight together.
    const both = meeting(2);
    const [a, b] = await Promise.all([legacyCaller("token:a", "A's answer", { ready: both }), legacyCaller("token:b", "B's answer", { ready: both })]);
    try {
      const [ra, rb] = await Promise.all([a.call("ask", { message: "question of A" }), b.call("ask", { message: "question of B" })]);
      expect(JSON.parse(textOf(ra as never))).toEqual({ asked: "question of A", answer: { action: "accept", content: { answer: "A's answer" } } });
      expect(JSON.parse(textOf(rb as never))).toEqual({ asked: "question of B", answer: { action: "accept", content: { answer: "B's answer" } } });
      expect(a.asked).toEqual(["question of A"]);
      expect(b.asked).toEqual(["question of B"]);
    } finally {
      await Promise.all([a.client.close(), b.client.close()]);
    }
  });

  it("are answered over several rounds, each retry carrying the server's state back", async () => {
    const caller = await legacyCaller("token:rounds", "yes");
    try {
      const result = await caller.call("ask_rounds", { rounds: 3 });
      expect(JSON.parse(textOf(result as never))).toHaveLength(3);
      expect(caller.asked).toEqual(["question 1 of 3", "question 2 of 3", "question 3 of 3"]);
    } finally {
      await caller.client.close();
    }
  });

  it("stop after 8 rounds with a sentence saying so", async () => {
    const caller = await legacyCaller("token:endless", "yes");
    try {
      const result = await caller.call("ask_rounds", { rounds: 50 });
      expect(result.isError).toBe(true);
      expect(textOf(result as never)).toBe("m__ask_rounds needs input that codemux could not ask for: it asked more than 8 rounds of questions.");
      expect(caller.asked).toHaveLength(8);
    } finally {
      await caller.client.close();
    }
  });

  it("go to the calling client's model for sampling, and a shared server's roots come from codemux's root, not from the client", async () => {
    const caller = await legacyCaller("token:sample", "the model's text");
    try {
      const sampled = JSON.parse(textOf((await caller.call("sample", { message: "a prompt" })) as never));
      expect(sampled.answer).toMatchObject({ role: "assistant", content: { type: "text", text: "the model's text" } });
      expect(caller.asked).toEqual(["a prompt"]);
      const roots = JSON.parse(textOf((await caller.call("roots")) as never));
      expect(roots.answer.roots.map((r: { uri: string }) => r.uri)).toEqual([`file://${dir}`]);
    } finally {
      await caller.client.close();
    }
  });

  it("are not asked of a client that did not declare the capability, nor when no MCP client made the call", async () => {
    const caller = await legacyCaller("token:plain", "never", { capabilities: {} });
    try {
      const result = await caller.call("ask", { message: "can you?" });
      expect(result.isError).toBe(true);
      // The server was told the caller's capabilities, so it does not ask.
      expect(textOf(result as never)).toMatch(
        /^m__ask failed: .*\(elicitation\/create\): the request's client capabilities do not declare the required capability/,
      );
      expect(caller.asked).toEqual([]);
    } finally {
      await caller.client.close();
    }
    const rest = await core
      .surface("code")
      .callTool("call_tool", { name: "m__ask", args: { message: "from REST" } }, { session: core.session(), origin: "rest" });
    expect(textOf(rest as never)).toBe("m__ask needs input that codemux could not ask for: the call came from no MCP client to ask (rest).");
  });

  it("are asked while a snippet waits, and each snippet gets its own client's answer, with two clients' snippets in flight at once", async () => {
    const both = meeting(2);
    const [a, b] = await Promise.all([legacyCaller("token:snippet-a", "A's", { ready: both }), legacyCaller("token:snippet-b", "B's", { ready: both })]);
    const run = (caller: Caller, message: string) =>
      caller.client.callTool({
        name: "execute_code",
        arguments: { code: `import { ask } from "mcp/servers/m";\nexport default await ask({ message: "${message}" });` },
      });
    try {
      const [ra, rb] = await Promise.all([run(a, "asked from A's snippet"), run(b, "asked from B's snippet")]);
      expect(JSON.parse(textOf(ra as never)).result).toEqual({ asked: "asked from A's snippet", answer: { action: "accept", content: { answer: "A's" } } });
      expect(JSON.parse(textOf(rb as never)).result).toEqual({ asked: "asked from B's snippet", answer: { action: "accept", content: { answer: "B's" } } });
      expect(a.asked).toEqual(["asked from A's snippet"]);
      expect(b.asked).toEqual(["asked from B's snippet"]);
    } finally {
      await Promise.all([a.client.close(), b.client.close()]);
    }
  });
});

describe("a 2026 server's URL-mode elicitation under a 2025-11-25 client", () => {
  it("carries an elicitationId, which 2025-11-25 requires and 2026-07-28 dropped: a new one each time it is asked", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createSessionServer(core.sessions, { session: { id: "session-url", principal: "token:url" } }).connect(serverSide);
    const client = new Client({ name: "url", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
    const asked: Array<Record<string, unknown>> = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept" };
    });
    await client.connect(clientSide);
    try {
      const call = () => client.callTool({ name: "call_tool", arguments: { name: "m__ask_url", args: { message: "Sign in to the calendar" } } });
      expect(JSON.parse(textOf((await call()) as never))).toEqual({ asked: "Sign in to the calendar", answer: { action: "accept" } });
      await call();
      expect(asked[0]).toMatchObject({ mode: "url", message: "Sign in to the calendar", url: "https://auth.example.com/consent" });
      expect(asked.map((p) => p.elicitationId)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)]);
      expect(asked[0]?.elicitationId).not.toBe(asked[1]?.elicitationId);
    } finally {
      await client.close();
    }
  });
});

/** Each call waits until `count` calls have come. */
function meeting(count: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === count) open();
    return opened;
  };
}
