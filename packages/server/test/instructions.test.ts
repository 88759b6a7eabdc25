import type { SessionInfo } from "@codemux/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer, policiesOf } from "../src/index";
import { serveStdio } from "../src/stdio";
import { ALL_INSTRUCTIONS_CHARS, SERVER_INSTRUCTIONS_CHARS, serverInstructions } from "../src/render/instructions";
import { config, misbehaving } from "./helpers";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-instructions-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const servers = {
  notes: misbehaving("--name", "notes", "--instructions", "Call echo before anything else."),
  hidden: misbehaving("--name", "hidden", "--instructions", "Secret ops runbook."),
  quiet: misbehaving("--name", "quiet"),
};

/** The instructions a client gets at initialize from a session of `core` (as `who`, or the local user). */
async function instructionsOf(core: Codemux, who?: SessionInfo): Promise<string | undefined> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions, who ? { session: who } : {}).connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  const text = client.getInstructions();
  await client.close();
  return text;
}

describe("downstream servers' instructions", () => {
  it("reach the client after codemux's own, each under its server's name; a server that gave none adds nothing", async () => {
    const core = new Codemux({ config: config(servers), dataDir: join(dir, "live"), cacheDir: join(dir, "live-cache") });
    core.start();
    await core.ready(10_000);
    try {
      const text = await instructionsOf(core);
      expect(text).toMatch(
        /^codemux connects you to many MCP servers' tools[^\n]*Servers: notes, hidden, quiet\.\n\nWhat the servers say about their own tools:\n/,
      );
      expect(text).toContain("[notes] Call echo before anything else.");
      expect(text).toContain("[hidden] Secret ops runbook.");
      expect(text).not.toContain("[quiet]");
      // Passthrough lists the tools themselves: the servers' words are all its instructions.
      expect(core.surface("passthrough").instructions(core.session())).toMatch(/^What the servers say about their own tools:\n\[notes\]/);
    } finally {
      await core.close();
    }
  });

  it("are known from the catalog cache at the next start, before the servers have connected", async () => {
    const cacheDir = join(dir, "cache");
    const first = new Codemux({ config: config(servers), dataDir: join(dir, "first"), cacheDir });
    first.start();
    await first.ready(10_000);
    await first.close();
    // The cache is keyed by the config: the same one, lazy, so no server connects before the client reads the instructions.
    const second = new Codemux({ config: config(servers), dataDir: join(dir, "second"), cacheDir, poolOptions: { lazy: true } });
    second.start();
    await second.readiness.loaded();
    try {
      expect(await instructionsOf(second)).toContain("[notes] Call echo before anything else.");
    } finally {
      await second.close();
    }
  });

  it("reach a 2026 client's first server/discover over stdio from the cache, while nothing has started (the SDK's probe)", async () => {
    const cacheDir = join(dir, "stdio-cache");
    const first = new Codemux({ config: config(servers), dataDir: join(dir, "stdio-first"), cacheDir });
    first.start();
    await first.ready(10_000);
    await first.close();
    const probed = new Codemux({ config: config(servers), dataDir: join(dir, "stdio-probed"), cacheDir });
    const [stdin, stdout] = [new PassThrough(), new PassThrough()];
    let started = false;
    const serving = serveStdio(probed.sessions, { stdin, stdout, onFirstRequest: () => (started = true) });
    const _meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
    stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta } })}\n`);
    let line = "";
    for await (const chunk of stdout) {
      line += String(chunk);
      if (line.includes("\n")) break;
    }
    stdin.end();
    await serving;
    await probed.close();
    expect(JSON.parse(line).result.instructions).toContain("[notes] Call echo before anything else.");
    expect(started).toBe(false);
  });

  it("of a server a principal's policy hides are not shown to it", async () => {
    const policies = policiesOf({ policies: { rules: [{ name: "notes only", principals: ["token:alice"], tools: ["notes__*"] }] } }, "codemux.json");
    const core = new Codemux({ config: config(servers), dataDir: join(dir, "policy"), ...(policies ? { policies } : {}) });
    core.start();
    await core.ready(10_000);
    try {
      const text = await instructionsOf(core, { id: "alice-1", principal: "token:alice" });
      expect(text).toContain("[notes] Call echo before anything else.");
      expect(text).not.toContain("hidden");
      expect(text).not.toContain("Secret ops runbook");
    } finally {
      await core.close();
    }
  });

  it("are bounded per server and in all, and lose control characters", () => {
    const long = "x".repeat(SERVER_INSTRUCTIONS_CHARS * 3);
    const text = serverInstructions(["a", "b", "c", "d", "e", "f"], (s) => (s === "a" ? "ring\u0007\u001b[31mred\u0000" : long));
    expect(text).toContain("[a] ring  [31mred");
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    for (const line of text.split("\n").slice(1)) expect(line.length).toBeLessThanOrEqual(SERVER_INSTRUCTIONS_CHARS + 4);
    expect(text.length).toBeLessThanOrEqual(ALL_INSTRUCTIONS_CHARS + 200);
    expect(text).not.toContain("[f]");
  });
});
