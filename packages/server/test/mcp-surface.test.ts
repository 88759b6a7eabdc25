import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer } from "../src/index";
import { config, node, referenceServer, textOf } from "./helpers";

let core: Codemux;
const clients: Client[] = [];

/** A client session on the shared core; `sampling` answers sampling requests with its own text, `elicitation` accepts with a name. */
async function client(name: string, options: { sampling?: string; elicitation?: boolean } = {}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const c = new Client(
    { name, version: "1.0.0" },
    { capabilities: { ...(options.sampling ? { sampling: {} } : {}), ...(options.elicitation ? { elicitation: {} } : {}) } },
  );
  if (options.sampling) {
    const answer = options.sampling;
    c.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: "stand-in", role: "assistant", content: { type: "text", text: answer } }));
  }
  if (options.elicitation) c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: `${name} user` } }));
  await c.connect(clientSide);
  clients.push(c);
  return c;
}

const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
  (await c.callTool({ name: "call_tool", arguments: { name, args } })) as CallToolResult;

beforeAll(async () => {
  core = new Codemux({ config: config({ everything: node(referenceServer("@modelcontextprotocol/server-everything"), "stdio") }) });
  core.start();
  await core.ready();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await core.close();
});

describe("resources through codemux", () => {
  it("lists, reads and reads by a server's template", async () => {
    const c = await client("reader");
    const { resources } = await c.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const first = resources[0]!;
    expect(first.description).toMatch(/^\[everything\]/);
    const read = await c.readResource({ uri: first.uri });
    expect(read.contents[0]?.uri).toBe(first.uri);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain("demo://resource/dynamic/text/{resourceId}");
    const dynamic = await c.readResource({ uri: "demo://resource/dynamic/text/7" });
    expect(JSON.stringify(dynamic.contents)).toContain("7");
    await expect(c.readResource({ uri: "nowhere://x" })).rejects.toThrow(/No server offers the resource/);
  });
});

describe("resources and prompts in code mode and search", () => {
  it("snippets list and read resources through mcp/resources", async () => {
    const c = await client("coder");
    const code =
      'import { listResources, readResource } from "mcp/resources";\nconst all = await listResources();\nconst [first] = await readResource(all[0]!.uri);\nexport default { count: all.length, same: first!.uri === all[0]!.uri };';
    const body = JSON.parse(textOf((await c.callTool({ name: "execute_code", arguments: { code } })) as CallToolResult));
    expect(body.result.count).toBeGreaterThan(0);
    expect(body.result.same).toBe(true);
    expect(textOf((await c.callTool({ name: "read_module", arguments: { specifier: "mcp/resources" } })) as CallToolResult)).toContain(
      "export async function readResource(uri: string)",
    );
  });

  it("search_tools finds resources, templates and prompts, marked by kind", async () => {
    const c = await client("searcher");
    await expect
      .poll(
        async () => textOf((await c.callTool({ name: "search_tools", arguments: { query: "completable prompt department", limit: 5 } })) as CallToolResult),
        { timeout: 10_000 },
      )
      .toMatch(/everything__completable-prompt .*\(prompt\)/);
    const resources = textOf((await c.callTool({ name: "search_tools", arguments: { query: "dynamic text resource template", limit: 5 } })) as CallToolResult);
    expect(resources).toMatch(/\(resource\)/);
  });
});

describe("prompts through codemux", () => {
  it("lists them as server__prompt, gets one and completes its arguments at the owner", async () => {
    const c = await client("prompter");
    const { prompts } = await c.listPrompts();
    expect(prompts.map((p) => p.name)).toContain("everything__simple-prompt");
    const prompt = await c.getPrompt({ name: "everything__simple-prompt" });
    expect(prompt.messages.length).toBeGreaterThan(0);
    const completion = await c.complete({ ref: { type: "ref/prompt", name: "everything__completable-prompt" }, argument: { name: "department", value: "E" } });
    expect(completion.completion.values).toContain("Engineering");
  });
});

describe("server-to-client requests", () => {
  it("sends a server's sampling request to the client whose call caused it, and only to it", async () => {
    const a = await client("a", { sampling: "answer from a" });
    const b = await client("b", { sampling: "answer from b" });
    expect(textOf(await call(a, "everything__trigger-sampling-request", { prompt: "hi", maxTokens: 10 }))).toContain("answer from a");
    expect(textOf(await call(b, "everything__trigger-sampling-request", { prompt: "hi", maxTokens: 10 }))).toContain("answer from b");
  });

  it("relays elicitation to the calling client, and says so clearly when it cannot answer", async () => {
    const asker = await client("asker", { elicitation: true });
    expect(textOf(await call(asker, "everything__trigger-elicitation-request"))).toContain("asker user");
    const plain = await client("plain");
    const refused = await call(plain, "everything__trigger-elicitation-request");
    expect(textOf(refused)).toMatch(/does not support elicitation\/create/);
  });
});

describe("logging", () => {
  it("passes a server's log messages on, tagged with the server", async () => {
    const c = await client("listener");
    const messages: string[] = [];
    c.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
      messages.push(String(n.params.logger));
    });
    await c.setLoggingLevel("debug");
    await call(c, "everything__toggle-simulated-logging");
    await expect.poll(() => messages.length, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(messages[0]).toMatch(/^everything/);
    await call(c, "everything__toggle-simulated-logging");
  }, 30_000);
});
