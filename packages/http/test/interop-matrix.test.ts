import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { serveStdio } from "@codemux/server/stdio";
import { PassThrough } from "node:stream";
import { askingServerPath, modernServerPath, until } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, bearer, serve, textOf, type Served } from "./helpers";

/**
 * The interop matrix over HTTP and stdio: each client era against each downstream era, through one codemux
 * in passthrough mode. Every cell lists, calls, has a question (elicitation, sampling) relayed during a
 * call and a prompt, reads a resource list, reads the servers' instructions, hears progress, is told
 * roots by the one rule, cancels a call down to the server, and runs a snippet (execute_code) that calls
 * a tool of each era's per-session server, through a code-mode front of the same kind over the same servers.
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

/** How a client reaches codemux: its HTTP endpoint, or a stdio session of the same core (over a pair of pipes, in this process). */
interface Front {
  name: string;
  /** The codemux this front serves. */
  served(): Served;
  sdk1(): StreamableHTTPClientTransport | PipeTransport;
  sdk2(): ModernTransport | PipeTransport;
  /** The same kind of front in mode `code` (execute_code), over the same servers. */
  coded: Pick<Front, "sdk1" | "sdk2">;
}

/** A client's end of a stdio session: newline-delimited JSON-RPC, as a spawned server's stdin and stdout carry it. */
class PipeTransport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  protocolVersion: string | undefined;
  #partial = "";
  constructor(
    readonly fromServer: PassThrough,
    readonly toServer: PassThrough,
  ) {}
  async start(): Promise<void> {
    this.fromServer.setEncoding("utf8");
    this.fromServer.on("data", (chunk: string) => {
      const lines = (this.#partial + chunk).split("\n");
      this.#partial = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) this.onmessage?.(JSON.parse(line) as JSONRPCMessage);
    });
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(`${JSON.stringify(message)}\n`);
  }
  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }
  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}

/** Sessions served over stdio, awaited at the end. */
const stdioSessions: Array<Promise<void>> = [];

/** A stdio session of `served`'s core, in the core's own mode. */
function stdioSession(served: () => Served): () => PipeTransport {
  return () => {
    const [toServer, fromServer] = [new PassThrough(), new PassThrough()];
    stdioSessions.push(serveStdio(served().core.sessions, { stdin: toServer, stdout: fromServer }));
    return new PipeTransport(fromServer, toServer);
  };
}

const httpFront = (served: () => Served): Pick<Front, "sdk1" | "sdk2"> => ({
  sdk1: () => new StreamableHTTPClientTransport(new URL(`${served().url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }),
  sdk2: () => new ModernTransport(new URL(`${served().url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }),
});

// Each codemux serves one front in passthrough and the other in code mode: `s` HTTP passthrough, its core (stdio) code; `local` the reverse.
const FRONTS: Front[] = [
  { name: "HTTP", served: () => s, ...httpFront(() => s), coded: httpFront(() => local) },
  {
    name: "stdio",
    served: () => local,
    sdk1: stdioSession(() => local),
    sdk2: stdioSession(() => local),
    coded: { sdk1: stdioSession(() => s), sdk2: stdioSession(() => s) },
  },
];

async function sdk1(front: Front): Promise<Driver> {
  const client = new Client({ name: "sdk1", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: OWN }] }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: ANSWER } }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: "assistant", model: "m", content: { type: "text", text: SAMPLED } }));
  await client.connect(front.sdk1());
  return {
    version: () => (client.transport as { protocolVersion?: string } | undefined)?.protocolVersion,
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

async function sdk2(front: Front, mode: "legacy" | "auto"): Promise<Driver> {
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
  await client.connect(front.sdk2());
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

const CLIENTS: Array<[string, string, (front: Front) => Promise<Driver>]> = [
  ["SDK 1.x", "2025-11-25", sdk1],
  ["SDK v2 on 2025-11-25", "2025-11-25", (front) => sdk2(front, "legacy")],
  ["SDK v2 on 2026-07-28", "2026-07-28", (front) => sdk2(front, "auto")],
];
const CELLS = FRONTS.flatMap((front) =>
  CLIENTS.map(([client, version, connect]) => ({
    over: front.name,
    client,
    version,
    front,
    connect: (): Promise<Driver> => connect(front),
    connectCoded: (): Promise<Driver> => connect({ ...front, ...front.coded }),
  })),
);
/** Each downstream's era, as codemux speaks to it. */
const ERAS: Record<string, string> = { old: "2025-11-25", new: "2026-07-28" };

/** The team gateway (HTTP, alice's token), and a codemux of its own for stdio (one local user, as `codemux serve` on stdio is). */
let s: Served;
let local: Served;
beforeAll(async () => {
  // The core's own mode is its stdio sessions' (and its HTTP front's when that names none). The probe waits long enough for a 2026 server while the others start (2 s judged one 2025 under load).
  const poolOptions = { backoff: { initialMs: 50, maxMs: 200 }, probeTimeoutMs: 10_000 };
  [s, local] = await Promise.all([
    serve({ mode: "passthrough" }, { ...SERVERS, ...ISOLATED }, { mode: "code", poolOptions }),
    serve({ mode: "code" }, { ...SERVERS, ...ISOLATED }, { mode: "passthrough", poolOptions }),
  ]);
});
afterAll(async () => {
  await Promise.all(stdioSessions);
  await Promise.all([s?.close(), local?.close()]);
});

describe.each(CELLS)("the interop matrix over $over: $client", ({ version, front, connect, connectCoded }) => {
  it.each(Object.keys(SERVERS))(
    "against the %s server: list, call, questions relayed in a call and a prompt, sampling, resources, instructions",
    async (server) => {
      const client = await connect();
      try {
        expect(client.version()).toBe(version);
        expect(
          front
            .served()
            .core.pool.status()
            .find((status) => status.name === server)?.protocol,
        ).toBe(ERAS[server]);
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
    const client = await connect();
    try {
      expect(await client.progress("old__progress", { message: "halfway" })).toContain("halfway");
    } finally {
      await client.close();
    }
  });

  // On the per-session servers: a call that just ended on a shared server would make its next question ambiguous to another cell's client.
  it.each(Object.keys(ISOLATED))("snippet: execute_code calls a tool of the %s server", async (server) => {
    const client = await connectCoded();
    try {
      expect(client.version()).toBe(version);
      const code = `import { hanging } from "mcp/servers/${server}";\nexport default await hanging({});`;
      expect(JSON.parse(await client.call("execute_code", { code })).result).toEqual({ waiting: expect.any(Number), cancelled: expect.any(Number) });
    } finally {
      await client.close();
    }
  });

  // Cancelling at the client is not enough: the downstream server's own request must end (its signal aborts).
  it.each(Object.keys(SERVERS))("cancellation: a call the client cancels is cancelled at the %s server", async (server) => {
    const client = await connect();
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
    const client = await connect();
    try {
      const told = await client.call(`${server}__roots`, {});
      expect(told).toContain(expected);
      expect(told).not.toContain(expected === OWN ? CONFIGURED : OWN);
    } finally {
      await client.close();
    }
  });
});
