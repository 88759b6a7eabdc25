import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { askingServerPath, modernServerPath, until } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, bearer, serve, textOf, type Served } from "./helpers";

/**
 * The interop matrix over HTTP: each client era against each downstream era, through one codemux in
 * passthrough mode. Every cell lists, calls, has a question (elicitation, sampling) relayed during a
 * call and a prompt, reads a resource list, and reads the servers' instructions.
 */
const CONFIGURED = "file:///srv/configured";
const SERVERS = {
  old: { command: process.execPath, args: [askingServerPath, "--instructions", "The 2025 server's own words."], roots: [CONFIGURED] },
  new: { command: process.execPath, args: [modernServerPath, "--legacy", "reject", "--ask-beyond-tools"], roots: [CONFIGURED] },
};
/** The same servers run per session: their roots are their own client's. */
const ISOLATED = {
  oldIso: { ...SERVERS.old, isolation: "session" },
  newIso: { ...SERVERS.new, isolation: "session" },
};

/** What a cell needs of a client, whichever SDK it is. */
interface Driver {
  /** The protocol revision the client speaks to codemux. */
  version(): string | undefined;
  tools(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<string>;
  /** Calls with a progress token: the progress messages heard. */
  progress(name: string, args: Record<string, unknown>): Promise<string[]>;
  prompt(name: string, args: Record<string, string>): Promise<string>;
  /** Starts a call to cancel: `begun` when its first progress comes, `cancel()` aborts it, `settled` says how it ended at the client. */
  started(name: string): Started;
  resources(): Promise<unknown[]>;
  instructions(): string | undefined;
  close(): Promise<void>;
}

const ANSWER = "the client's answer";
/** The roots every client of the matrix declares. */
const OWN = "file:///home/client/own";
const SAMPLED = "the client's model says hi";

async function sdk1(url: string): Promise<Driver> {
  const client = new Client({ name: "sdk1", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: OWN }] }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: ANSWER } }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: "assistant", model: "m", content: { type: "text", text: SAMPLED } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
  return {
    version: () => (client.transport as StreamableHTTPClientTransport | undefined)?.protocolVersion,
    tools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args) => textOf(await client.callTool({ name, arguments: args })),
    progress: async (name, args) => {
      const heard: string[] = [];
      await client.callTool({ name, arguments: args }, undefined, { onprogress: (p) => void heard.push(String(p.message)) });
      return heard;
    },
    prompt: async (name, args) => JSON.stringify((await client.getPrompt({ name, arguments: args })).messages),
    started: (name) => started((signal, onprogress) => client.callTool({ name, arguments: {} }, undefined, { signal, onprogress })),
    resources: async () => (await client.listResources()).resources,
    instructions: () => client.getInstructions(),
    close: () => client.close(),
  };
}

interface Started {
  begun: Promise<void>;
  cancel(): void;
  settled: Promise<"answered" | "rejected">;
}

/** A call to cancel, made by `call` with the signal and progress callback it is given. */
function started(call: (signal: AbortSignal, onprogress: () => void) => Promise<unknown>): Started {
  const abort = new AbortController();
  let heard: () => void = () => undefined;
  const begun = new Promise<void>((resolve) => (heard = resolve));
  return { begun, cancel: () => abort.abort(), settled: call(abort.signal, () => heard()).then(answered, rejected) };
}

const answered = () => "answered" as const;
const rejected = () => "rejected" as const;

async function sdk2(url: string, mode: "legacy" | "auto"): Promise<Driver> {
  const client = new ModernClient(
    { name: `sdk2-${mode}`, version: "1.0.0" },
    {
      capabilities: { elicitation: {}, sampling: {}, roots: {} },
      ...(mode === "auto" ? { versionNegotiation: { mode: "auto" as const } } : {}),
      inputRequired: { autoFulfill: true },
    },
  );
  client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { answer: ANSWER } }));
  client.setRequestHandler("sampling/createMessage", async () => ({ role: "assistant", model: "m", content: { type: "text", text: SAMPLED } }));
  client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: OWN }] }));
  await client.connect(new ModernTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
  return {
    version: () => client.getNegotiatedProtocolVersion(),
    tools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args) => textOf(await client.callTool({ name, arguments: args })),
    progress: async (name, args) => {
      const heard: string[] = [];
      await client.callTool({ name, arguments: args }, { onprogress: (p) => void heard.push(String(p.message)) });
      return heard;
    },
    prompt: async (name, args) => JSON.stringify((await client.getPrompt({ name, arguments: args })).messages),
    started: (name) => started((signal, onprogress) => client.callTool({ name, arguments: {} }, { signal, onprogress })),
    resources: async () => (await client.listResources()).resources,
    instructions: () => client.getInstructions(),
    close: () => client.close(),
  };
}

const CLIENTS: Array<[string, string, (url: string) => Promise<Driver>]> = [
  ["SDK 1.x", "2025-11-25", sdk1],
  ["SDK v2 on 2025-11-25", "2025-11-25", (url) => sdk2(url, "legacy")],
  ["SDK v2 on 2026-07-28", "2026-07-28", (url) => sdk2(url, "auto")],
];
/** Each downstream's era, as codemux speaks to it. */
const ERAS: Record<string, string> = { old: "2025-11-25", new: "2026-07-28" };

let s: Served;
beforeAll(async () => {
  s = await serve({ mode: "passthrough" }, { ...SERVERS, ...ISOLATED });
});
afterAll(async () => {
  await s?.close();
});

describe.each(CLIENTS)("the interop matrix over HTTP: %s", (_client, version, connect) => {
  it.each(Object.keys(SERVERS))(
    "against the %s server: list, call, questions relayed in a call and a prompt, sampling, resources, instructions",
    async (server) => {
      const client = await connect(s.url);
      try {
        expect(client.version()).toBe(version);
        expect(s.core.pool.status().find((status) => status.name === server)?.protocol).toBe(ERAS[server]);
        expect(await client.tools()).toContain(`${server}__ask`);
        expect(await client.call(`${server}__ask`, { message: "ready?" })).toContain(ANSWER);
        expect(await client.call(`${server}__sample`, { message: "say hi" })).toContain(SAMPLED);
        expect(await client.prompt(`${server}__ask`, { message: "which?" })).toContain(ANSWER);
        expect(Array.isArray(await client.resources())).toBe(true);
        expect(client.instructions()).toContain(`[${server}]`);
      } finally {
        await client.close();
      }
    },
  );

  // The modern test server reports no progress: the 2025 one's, relayed to each client era.
  it("progress: the old server's progress of a call reaches that call", async () => {
    const client = await connect(s.url);
    try {
      expect(await client.progress("old__progress", { message: "halfway" })).toContain("halfway");
    } finally {
      await client.close();
    }
  });

  // Cancelling at the client is not enough: the downstream server's own request must end (its signal aborts).
  it.each(Object.keys(SERVERS))("cancellation: a call the client cancels is cancelled at the %s server", async (server) => {
    const client = await connect(s.url);
    const hanging = async () => JSON.parse(await client.call(`${server}__hanging`, {})) as { waiting: number; cancelled: number };
    try {
      const before = await hanging();
      const call = client.started(`${server}__hang`);
      // After the cell's questions, another call to the 2025 server waits behind the hanging one: it says by progress that the call arrived.
      if (server === "old") await call.begun;
      else await until(async () => (await hanging()).waiting === before.waiting + 1);
      call.cancel();
      expect(await call.settled).toBe("rejected");
      await until(async () => (await hanging()).cancelled === before.cancelled + 1);
      expect((await hanging()).waiting).toBe(before.waiting);
    } finally {
      await client.close();
    }
  });

  // One rule for roots, in every cell: a shared server is told its config's, an isolated one its own client's.
  it.each([
    ["old", CONFIGURED],
    ["new", CONFIGURED],
    ["oldIso", OWN],
    ["newIso", OWN],
  ])("roots: the %s server is told %s", async (server, expected) => {
    const client = await connect(s.url);
    try {
      const told = await client.call(`${server}__roots`, {});
      expect(told).toContain(expected);
      expect(told).not.toContain(expected === OWN ? CONFIGURED : OWN);
    } finally {
      await client.close();
    }
  });
});
