import { askingServerPath, modernServerPath, until } from "@codemux/test-servers";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, misbehaving, referenceServer, serve, TOKENS, type Served } from "./helpers";

/**
 * Servers run per session or per principal (`isolation`), reached as clients reach codemux: real HTTP,
 * the SDK's Streamable HTTP client, real downstream processes. Two principals, alice with two sessions.
 */
const asking = (extra: Record<string, unknown>) => ({ command: process.execPath, args: [askingServerPath], ...extra });

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
  name: string;
  logs: string[];
  /** Sampling requests this client was sent (their prompt text). */
  sampled: string[];
  /** Resource updates (`updated <uri>`) and list changes this client was sent. */
  heard: string[];
}

let served: Served;
/** Resolved when both alice and bob have been asked to sample, so that each answers only while the other's question is open too. */
let bothAsked: Promise<void>;
let askedOnce: () => void = () => undefined;

/** A client session; with `roots` undefined its client declares no roots. */
async function open(token: string, name: string, roots?: string[]): Promise<Session> {
  const client = new Client({ name, version: "1.0.0" }, { capabilities: { sampling: {}, ...(roots ? { roots: { listChanged: true } } : {}) } });
  const session: Session = { client, name, logs: [], sampled: [], heard: [], transport: undefined as never };
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => void session.heard.push(`updated ${n.params.uri}`));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => void session.heard.push("resources/list_changed"));
  client.setNotificationHandler(PromptListChangedNotificationSchema, async () => void session.heard.push("prompts/list_changed"));
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((uri) => ({ uri })) }));
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    session.sampled.push(JSON.stringify(request.params.messages[0]?.content));
    askedOnce();
    await bothAsked;
    return { role: "assistant", model: "test", content: { type: "text", text: `${name}'s model answers` } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => void session.logs.push(String(notification.params.data)));
  session.transport = new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(session.transport);
  await client.setLoggingLevel("debug");
  return session;
}

const textOf = (result: unknown) => ((result as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
const call = async (who: Session, name: string, args: Record<string, unknown> = {}) =>
  textOf(await who.client.callTool({ name: "call_tool", arguments: { name, args } }));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const instancesOf = (server: string) => served.core.status().find((s) => s.name === server)?.instances;

let alice: Session;
let alice2: Session;
let bob: Session;
/** alice's and bob's folders (their clients' roots), and where each principal's memory graph is kept. */
let dir: string;
const folder = (who: string) => join(dir, who);
const memoryFile = (who: string) => join(dir, `${who}-memory.jsonl`);
/** Each static token's principal (`token:<name>`) with its own env. */
const perPrincipal = (values: (who: string) => Record<string, string>) =>
  Object.fromEntries(["alice", "bob"].map((who) => [`token:${who}`, { env: values(who) }]));

beforeAll(async () => {
  // realpath: the filesystem server names its folders by their real path.
  dir = await realpath(await mkdtemp(join(tmpdir(), "codemux-isolated-")));
  for (const who of ["alice", "bob"]) {
    await mkdir(folder(who));
    await writeFile(join(folder(who), "mine.txt"), `${who}'s file`);
  }
  served = await serve(
    {},
    {
      sess: asking({ isolation: "session", roots: ["/srv/configured"] }),
      per: asking({ isolation: "principal" }),
      idle: { ...misbehaving("--name", "idle"), isolation: "principal", idleStopMs: 300 },
      one: { ...misbehaving("--name", "one"), isolation: "principal", maxInstances: 1 },
      mine: { ...misbehaving("--name", "mine"), isolation: "session" },
      notes: { ...misbehaving("--name", "notes", "--resources"), isolation: "session" },
      pnotes: { ...misbehaving("--name", "pnotes", "--resources"), isolation: "principal" },
      // Shared: its changes reach every listener, after whatever went out before them on the same stream.
      board: misbehaving("--name", "board", "--resources"),
      // A 2026 server: it logs each listen's resource filter with its pid, so a test sees which process holds a subscription.
      mnotes: {
        command: process.execPath,
        args: [modernServerPath, "--legacy", "reject", "--list-changed", "--log", join(dir, "mnotes.log")],
        isolation: "session",
      },
      // Reference servers: the filesystem server takes its allowed folders from its client's roots; memory keeps a graph in a file.
      fs: { command: process.execPath, args: [referenceServer("@modelcontextprotocol/server-filesystem")], isolation: "session" },
      memory: {
        command: process.execPath,
        args: [referenceServer("@modelcontextprotocol/server-memory")],
        credentials: "per-principal",
        perPrincipal: perPrincipal((who) => ({ MEMORY_FILE_PATH: memoryFile(who) })),
      },
      keyed: {
        ...misbehaving("--name", "keyed"),
        credentials: "per-principal",
        perPrincipal: { "token:alice": { env: { API_KEY: "alice-key" } } },
      },
    },
    // A dozen servers start at once: the 2026 one's answer to the era probe may take past the default 2 s, which would judge it 2025.
    { poolOptions: { backoff: { initialMs: 50, maxMs: 200 }, probeTimeoutMs: 10_000 } },
  );
  alice = await open(TOKENS.alice, "alice", ["file:///home/alice/project", pathToFileURL(folder("alice")).href]);
  alice2 = await open(TOKENS.alice, "alice-2");
  bob = await open(TOKENS.bob, "bob", ["file:///home/bob/work", pathToFileURL(folder("bob")).href]);
});
afterAll(async () => {
  await Promise.all([alice, alice2, bob].map((s) => s?.client.close()));
  await served?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("isolation: session", () => {
  it("tells each session's instance that session's own roots, and the config's to a session whose client has none", async () => {
    expect(JSON.parse(await call(alice, "sess__roots"))).toEqual({
      roots: [{ uri: "file:///home/alice/project" }, { uri: pathToFileURL(folder("alice")).href }],
    });
    expect(JSON.parse(await call(bob, "sess__roots"))).toEqual({ roots: [{ uri: "file:///home/bob/work" }, { uri: pathToFileURL(folder("bob")).href }] });
    expect(JSON.parse(await call(alice2, "sess__roots"))).toEqual({ roots: [{ uri: "file:///srv/configured" }] });
    expect(instancesOf("sess")).toBe(3);
  });

  it("passes a client's roots/list_changed to its own instance, which asks it again, and to no other", async () => {
    await alice.client.sendRootsListChanged();
    const seen = async (who: Session) => JSON.parse(await call(who, "sess__roots_seen")) as unknown[];
    await until(async () => (await seen(alice)).length === 1);
    expect(await seen(alice)).toEqual([[{ uri: "file:///home/alice/project" }, { uri: pathToFileURL(folder("alice")).href }]]);
    expect(await seen(bob)).toEqual([]);
  });

  it("answers concurrent sampling from two principals' instances, each by its own client", async () => {
    bothAsked = new Promise((resolve) => {
      let count = 0;
      askedOnce = () => {
        if (++count === 2) resolve();
      };
    });
    const [a, b] = await Promise.all([call(alice, "sess__sample", { message: "alice's prompt" }), call(bob, "sess__sample", { message: "bob's prompt" })]);
    expect(a).toBe("alice's model answers");
    expect(b).toBe("bob's model answers");
    expect(alice.sampled).toEqual([JSON.stringify({ type: "text", text: "alice's prompt" })]);
    expect(bob.sampled).toEqual([JSON.stringify({ type: "text", text: "bob's prompt" })]);
  });

  it("sends an instance's log lines to its owner alone, even after the call that caused them ended", async () => {
    expect(await call(alice, "sess__log", { data: "alice's line during her call" })).toBe("done");
    expect(await call(alice, "sess__log", { data: "alice's late line", when: "after-answer", delayMs: 10 })).toBe("scheduled after the answer");
    await until(() => alice.logs.includes("alice's late line"));
    expect(alice.logs).toContain("alice's line during her call");
    expect([...bob.logs, ...alice2.logs].filter((line) => line.startsWith("alice's"))).toEqual([]);
  });

  it("ends a session's instance (its process) when the session ends", async () => {
    const mine = await open(TOKENS.bob, "bob-short");
    const { pid } = JSON.parse(await call(mine, "mine__counter")) as { pid: number };
    expect(alive(pid)).toBe(true);
    await mine.transport.terminateSession();
    await mine.client.close();
    await until(() => !alive(pid));
    expect(instancesOf("mine")).toBe(0);
  });
});

describe("an instance's notifications", () => {
  it.each([
    ["notes", "session"],
    ["pnotes", "principal"],
  ])("%s (per %s): its resource update and list changes reach its owner's sessions alone", async (server, per) => {
    const shown = `codemux://${server}/test://note`;
    expect((await alice.client.listResources()).resources.map((r) => r.uri)).toContain(shown);
    for (const who of [alice, alice2, bob]) await who.client.subscribeResource({ uri: shown });
    for (const who of [alice, alice2, bob]) who.heard.length = 0;
    const all = [`updated ${shown}`, "resources/list_changed", "prompts/list_changed"];
    expect(await call(alice, `${server}__change_lists`)).toBe("changed");
    await until(() => all.every((n) => alice.heard.includes(n)));
    // alice2 is alice's too: it shares her instance per principal, not per session.
    if (per === "principal") await until(() => all.every((n) => alice2.heard.includes(n)));
    // bob's own change, heard once: alice's went out before it and reached him not.
    expect(await call(bob, `${server}__change_lists`)).toBe("changed");
    await until(() => all.every((n) => bob.heard.includes(n)));
    expect(bob.heard.sort()).toEqual([...all].sort());
    expect(alice.heard.sort()).toEqual([...all].sort());
    if (per === "session") expect(alice2.heard).toEqual([]);
    for (const who of [alice, alice2, bob]) await who.client.unsubscribeResource({ uri: shown });
  });

  it.each([
    ["notes", "session"],
    ["pnotes", "principal"],
  ])("%s (per %s): a 2026 client's listen stream hears its own instance's list changes and resource update, and not another principal's", async (server) => {
    const shown = `codemux://${server}/test://note`;
    const listening = async (token: string) => {
      const client = new ModernClient({ name: "modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
      await client.connect(new ModernTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: bearer(token) } }));
      const heard: string[] = [];
      client.setNotificationHandler("notifications/resources/list_changed", () => void heard.push("resources/list_changed"));
      client.setNotificationHandler("notifications/prompts/list_changed", () => void heard.push("prompts/list_changed"));
      client.setNotificationHandler("notifications/resources/updated", (n) => void heard.push(`updated ${String(n.params.uri)}`));
      const subscription = await client.listen({ resourcesListChanged: true, promptsListChanged: true, resourceSubscriptions: [shown] });
      const call = async (name: string) => textOf(await client.callTool({ name: "call_tool", arguments: { name, args: {} } }));
      return { client, heard, subscription, call };
    };
    const [a, b] = [await listening(TOKENS.alice), await listening(TOKENS.bob)];
    try {
      const all = [`updated ${shown}`, "resources/list_changed", "prompts/list_changed"];
      expect(await a.call(`${server}__change_lists`)).toBe("changed");
      await until(() => all.every((n) => a.heard.includes(n)));
      // A shared server's change reaches bob's stream after anything of alice's that went to it: none did.
      expect(await a.call("board__change_lists")).toBe("changed");
      await until(() => b.heard.length >= 2);
      expect(b.heard.sort()).toEqual(["prompts/list_changed", "resources/list_changed"]);
      b.heard.length = 0;
      expect(await b.call(`${server}__change_lists`)).toBe("changed");
      await until(() => all.every((n) => b.heard.includes(n)));
    } finally {
      for (const who of [a, b]) {
        await who.subscription.close();
        await who.client.close();
      }
    }
  });

  it("holds a subscription to an isolated server's resource on the subscriber's own instance, whose update reaches it", async () => {
    const { pid } = JSON.parse(await call(alice, "mnotes__counter")) as { pid: number };
    expect(await call(alice, "mnotes__add_resource", { uri: "test://watched" })).toBe("added test://watched");
    const shown = "codemux://mnotes/test://watched";
    alice.heard.length = 0;
    await alice.client.subscribeResource({ uri: shown });
    await until(async () => (await readFile(join(dir, "mnotes.log"), "utf8")).includes(`${pid} listen-resources ["test://watched"]`));
    await call(alice, "mnotes__update_resource", { uri: "test://watched" });
    await until(() => alice.heard.includes(`updated ${shown}`));
    await alice.client.unsubscribeResource({ uri: shown });
  });
});

describe("reference servers", () => {
  it("the filesystem server, per session, reaches each client's own folders and not the other's", async () => {
    const read = (who: Session, owner: string) => call(who, "fs__read_text_file", { path: join(folder(owner), "mine.txt") });
    // The server asks for its roots once started, while the first call may already be on its way: wait until it has them.
    await until(async () => (await read(alice, "alice")).includes("alice's file"));
    await until(async () => (await read(bob, "bob")).includes("bob's file"));
    const refused = await read(bob, "alice");
    expect(refused).toMatch(/Access denied|outside allowed directories/i);
    expect(refused).not.toContain("alice's file");
  });

  it("the memory server, per principal with its own graph file, keeps one principal's entities from another", async () => {
    const entity = { name: "alice-project", entityType: "project", observations: ["due friday"] };
    await call(alice, "memory__create_entities", { entities: [entity] });
    expect(await call(alice2, "memory__read_graph")).toContain("alice-project");
    expect(await call(bob, "memory__read_graph")).not.toContain("alice-project");
  });
});

describe("isolation: session, served stateless", () => {
  it("keeps a principal's one session's instance across requests, each served by a fresh MCP server", async () => {
    const stateless = await serve({ stateless: true }, { mine: { ...misbehaving("--name", "mine"), isolation: "session" } });
    try {
      const client = new Client({ name: "stateless", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${stateless.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKENS.alice}` } } }),
      );
      const count = async () => JSON.parse(textOf(await client.callTool({ name: "call_tool", arguments: { name: "mine__counter" } }))) as { calls: number };
      expect((await count()).calls).toBe(1);
      expect((await count()).calls).toBe(2);
      await client.close();
    } finally {
      await stateless.close();
    }
  });
});

describe("isolation: principal", () => {
  it("shares no state between principals, and shares it between one principal's sessions", async () => {
    expect(await call(alice, "per__remember", { value: "alice's secret" })).toBe("remembered 1");
    expect(JSON.parse(await call(bob, "per__recall"))).toEqual([]);
    expect(JSON.parse(await call(alice2, "per__recall"))).toEqual(["alice's secret"]);
    // A prompt is got from the asking session's own instance too, not from the connection that lists prompts.
    const recalled = async (who: Session) => (await who.client.getPrompt({ name: "per__recall" })).messages[0]?.content;
    expect(await recalled(bob)).toEqual({ type: "text", text: "[]" });
    expect(await recalled(alice2)).toEqual({ type: "text", text: JSON.stringify(["alice's secret"]) });
  });

  it("tells a principal's instance the roots of that principal's most recent session that has some", async () => {
    expect(JSON.parse(await call(alice2, "per__roots"))).toEqual({
      roots: [{ uri: "file:///home/alice/project" }, { uri: pathToFileURL(folder("alice")).href }],
    });
    expect(JSON.parse(await call(bob, "per__roots"))).toEqual({ roots: [{ uri: "file:///home/bob/work" }, { uri: pathToFileURL(folder("bob")).href }] });
  });

  it("stops an instance unused for idleStopMs, ending its process; the next call starts a fresh one", async () => {
    const first = JSON.parse(await call(alice, "idle__counter")) as { calls: number; pid: number };
    await until(() => !alive(first.pid));
    expect(instancesOf("idle")).toBe(0);
    expect(JSON.parse(await call(alice, "idle__counter"))).toMatchObject({ calls: 1 });
  });

  it("past maxInstances refuses a new principal with a sentence that names the bound, and never serves it on another's instance", async () => {
    expect(JSON.parse(await call(alice, "one__counter"))).toMatchObject({ calls: 1 });
    const refused = await call(bob, "one__counter");
    expect(refused).toMatch(/Server "one" runs one instance per principal and all 1 it may run \(its "maxInstances"\) are in use by others/);
    expect(refused).not.toMatch(/"calls"/);
    expect(JSON.parse(await call(alice2, "one__counter"))).toMatchObject({ calls: 2 });
  });
});

describe("credentials: per-principal", () => {
  it("runs the server with each principal's own secret, and tells a principal without one how to get one, never lending another's", async () => {
    expect(JSON.parse(await call(alice, "keyed__env", { name: "API_KEY" }))).toEqual({ value: "alice-key" });
    const refused = await call(bob, "keyed__env", { name: "API_KEY" });
    expect(refused).toMatch(/needs login \(token:bob has no credentials of its own for it\): the operator adds them to its entry under "perPrincipal"/);
    expect(refused).not.toContain("alice-key");
    expect(instancesOf("keyed")).toBe(1);
  });
});
