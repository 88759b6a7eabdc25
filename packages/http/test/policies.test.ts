import { loadPlugins, type LoadedPlugins } from "@codemux/hooks";
import { createJobs, type Jobs } from "@codemux/jobs";
import { parseConfig } from "@codemux/pool";
import { Codemux, policiesOf } from "@codemux/server";
import { askingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { referenceServer, restAs, textOf } from "./helpers";

/**
 * Two principals with different policies on one gateway, as clients reach it (real HTTP, the SDK's
 * Streamable HTTP client, the filesystem reference server and the asking test server): alice sees the
 * filesystem server read-only, bob the asking server; each sees only its own catalog on every surface
 * and cannot call around it from a snippet, a job or REST.
 */
const TOKENS = {
  alice: "alice-token-policies-0001",
  bob: "bob-token-policies-0002",
  carol: "carol-token-policies-0003",
  dave: "dave-token-policies-0004",
  erin: "erin-token-policies-0005",
};
/** The principal a static token's holder acts as: the one place to change when tokens are named `token:<name>`. */
const principalOf = (token: keyof typeof TOKENS) => `token:${token}`;
const UNKNOWN = /^No tool named "([^"]+)"\.( Did you mean [^?]*\?)? Names look like "server__tool"/;

let dir: string;
let core: Codemux;
let http: CodemuxHttpServer;
let dispatchHttp: CodemuxHttpServer;
let passthroughHttp: CodemuxHttpServer;
let plugins: LoadedPlugins;
let jobs: Jobs;
const clients: Client[] = [];

async function connect(token: string, url = http.url): Promise<Client> {
  const client = new Client({ name: "policies", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

const tool = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const search = async (client: Client, query: string) => textOf(await tool(client, "search_tools", { query, limit: 50, detail: "name" }));
const execute = async (client: Client, code: string) => JSON.parse(textOf(await tool(client, "execute_code", { code }))) as Record<string, unknown>;

const rest = (token: string, path: string, body?: unknown) => restAs(http.url)(token, path, body);

let alice: Client;
let bob: Client;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "codemux-policies-")));
  await writeFile(join(dir, "notes.txt"), "alice may read this");
  const file = join(dir, "codemux.json");
  const raw = {
    mcpServers: {
      fs: { command: process.execPath, args: [referenceServer("@modelcontextprotocol/server-filesystem"), dir] },
      ask: { command: process.execPath, args: [askingServerPath] },
    },
    policies: {
      rules: [
        { name: "readers", principals: [principalOf("alice")], tools: ["fs"], readOnly: true },
        { name: "askers", principals: [principalOf("bob")], tools: ["ask"], concurrentJobs: 1 },
        { name: "metered", principals: [principalOf("carol")], tools: ["ask__result"], callsPerMinute: 2 },
        { name: "team", groups: ["ask-team"], tools: ["ask__result"] },
      ],
    },
  };
  const config = parseConfig(JSON.stringify(raw), { file, env: process.env });
  plugins = await loadPlugins({ config: { plugins: { audit: { file: join(dir, "audit.jsonl") } } }, configFile: file, dataDir: dir });
  const policies = policiesOf(raw, file);
  jobs = createJobs({ dataDir: dir, jobsAtOnce: (session) => core.access.grant(session)?.concurrentJobs });
  core = new Codemux({
    config,
    root: dir,
    dataDir: dir,
    middleware: [plugins.middleware, jobs.middleware],
    jobs: jobs.runner,
    metaTools: jobs.metaTools,
    ...(policies ? { policies } : {}),
  });
  core.start();
  await core.ready();
  // erin's token carries a group: the "team" rule matches her by it.
  const tokens = Object.entries(TOKENS).map(([name, token]) => ({ name, token, ...(name === "erin" ? { groups: ["ask-team"] } : {}) }));
  http = new CodemuxHttpServer(core, { port: 0, compatRoutes: true, tokens, log: () => undefined });
  dispatchHttp = new CodemuxHttpServer(core, { port: 0, mode: "dispatch", tokens, log: () => undefined });
  passthroughHttp = new CodemuxHttpServer(core, { port: 0, mode: "passthrough", tokens, log: () => undefined });
  await Promise.all([http.listen(), dispatchHttp.listen(), passthroughHttp.listen()]);
  alice = await connect(TOKENS.alice);
  bob = await connect(TOKENS.bob);
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all([http?.close(), dispatchHttp?.close(), passthroughHttp?.close()]);
  await jobs?.close();
  await core?.close();
  await plugins?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("each principal sees only its own catalog", () => {
  it("search_tools finds only the tools the principal's rule shows", async () => {
    const aliceFound = await search(alice, "read a file, ask the user, answer with a result");
    expect(aliceFound).toContain("fs__read_text_file");
    expect(aliceFound).not.toContain("ask__");
    const bobFound = await search(bob, "read a file, ask the user, answer with a result");
    expect(bobFound).toContain("ask__ask");
    expect(bobFound).not.toContain("fs__");
    // Even its exact name does not find a hidden tool.
    expect(await search(bob, "fs__read_text_file")).not.toContain("fs__read_text_file");
  });

  it("list_modules, read_module and a server's index module show only the principal's tools", async () => {
    const aliceRoot = textOf(await tool(alice, "list_modules"));
    expect(aliceRoot).toContain("mcp/servers/fs");
    expect(aliceRoot).not.toContain("mcp/servers/ask");
    expect(textOf(await tool(bob, "list_modules"))).not.toContain("mcp/servers/fs");
    expect(textOf(await tool(bob, "list_modules", { path: "mcp/servers/ask" }))).toContain("mcp/servers/ask/ask");

    const hiddenModule = await tool(alice, "read_module", { specifier: "mcp/servers/ask/ask" });
    // A server name as far from "fs" as "ask" is, so that both get the same did-you-mean.
    const missingModule = await tool(alice, "read_module", { specifier: "mcp/servers/qsk/ask" });
    expect(hiddenModule.isError).toBe(true);
    expect(textOf(hiddenModule).replace("ask/ask", "X")).toBe(textOf(missingModule).replace("qsk/ask", "X"));
    expect(textOf(await tool(alice, "read_module", { specifier: "mcp/servers/ask" }))).toMatch(/^No module "mcp\/servers\/ask"/);
    const byName = await tool(alice, "read_module", { specifier: "ask__ask" });
    expect(textOf(byName)).toMatch(UNKNOWN);
    expect(textOf(byName)).not.toMatch(/Did you mean[^?]*ask__/);
    expect(textOf(await tool(bob, "read_module", { specifier: "mcp/servers/ask" }))).toContain("export { ask");
  });

  it("resources of a server the rule hides are neither listed nor read", async () => {
    const listed = (await bob.listResources()).resources.map((r) => r.uri);
    expect(listed.length).toBeGreaterThan(0);
    expect((await alice.listResources()).resources.map((r) => r.uri)).not.toContain(listed[0]);
    await expect(alice.readResource({ uri: listed[0] as string })).rejects.toThrow(/No server offers the resource/);
    expect((await bob.readResource({ uri: listed[0] as string })).contents[0]).toMatchObject({ text: "hello" });
  });

  it("REST lists, describes and calls only the principal's tools; OpenAPI names none of the catalog", async () => {
    const listed = await rest(TOKENS.alice, "/v1/tools?limit=500");
    const names = (listed.body.tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain("fs__read_text_file");
    expect(names.some((n) => n.startsWith("ask__"))).toBe(false);
    expect((await rest(TOKENS.alice, "/v1/tools?q=ask+the+user")).body.tools).not.toContainEqual(expect.objectContaining({ server: "ask" }));

    const hidden = await rest(TOKENS.alice, "/v1/tools/ask__ask");
    const missing = await rest(TOKENS.alice, "/v1/tools/zzz__ask");
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    const called = await rest(TOKENS.alice, "/v1/tools/ask__result/call", { result: { content: [{ type: "text", text: "x" }] } });
    expect(called.status).toBe(404);
    expect(JSON.stringify(called.body)).toMatch(/No tool named \\"ask__result\\"/);
    expect((await rest(TOKENS.alice, "/v1/tools?server=ask")).status).toBe(404);
    // The compat routes read the same view.
    const compat = await rest(TOKENS.alice, "/tools");
    expect(JSON.stringify(compat.body)).not.toContain("ask__");

    const openapi = JSON.stringify((await rest(TOKENS.alice, "/v1/openapi.json")).body);
    expect(openapi).not.toContain("ask__");
    expect(openapi).not.toContain("fs__");
  });

  it("dispatch mode lists, searches and calls only the principal's tools", async () => {
    const client = await connect(TOKENS.alice, dispatchHttp.url);
    const listed = textOf(await tool(client, "codemux", { action: "list" }));
    expect(listed).toContain("fs__read_text_file");
    expect(listed).not.toContain('"ask"');
    expect(textOf(await tool(client, "codemux", { action: "search", query: "ask the user a question" }))).not.toContain("ask__");
    const called = await tool(client, "codemux", { action: "call", tool: "ask__result", arguments: {} });
    expect(called.isError).toBe(true);
    expect(textOf(called)).toMatch(/No tool named "ask__result"/);
    // A bare name that only a hidden server has is unknown too.
    expect(textOf(await tool(client, "codemux", { action: "call", tool: "roots" }))).toMatch(/No tool named "roots"/);
  });
});

describe("passthrough mode", () => {
  it("lists only the principal's tools and answers a hidden one as unknown", async () => {
    const client = await connect(TOKENS.alice, passthroughHttp.url);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("fs__read_text_file");
    expect(names.some((n) => n.startsWith("ask__"))).toBe(false);
    const hidden = await tool(client, "ask__roots").catch((error: unknown) => error);
    const missing = await tool(client, "qsk__roots").catch((error: unknown) => error);
    expect(hidden).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool "ask__roots": this client is offered ') });
    // As for a tool that does not exist, and without naming the hidden server's tools.
    expect((hidden as Error).message.replace("ask__roots", "X")).toBe((missing as Error).message.replace("qsk__roots", "X"));
    expect((hidden as Error).message.split("offered")[1]).not.toContain("ask__");
  });
});

describe("no way around the policy", () => {
  it("a snippet cannot import a hidden tool's module or call it through the bridge: both answer as for a tool that does not exist", async () => {
    const hidden = await execute(alice, 'import { ask } from "mcp/servers/ask/ask";\nexport default await ask({});');
    const missing = await execute(alice, 'import { ask } from "mcp/servers/qsk/ask";\nexport default await ask({});');
    expect(hidden.error).toBeDefined();
    expect(JSON.stringify(hidden.error).replaceAll("ask/ask", "X")).toBe(JSON.stringify(missing.error).replaceAll("qsk/ask", "X"));
    const bridged = await execute(alice, 'import { callTool } from "mcp/bridge";\nexport default await callTool("ask__roots", {});');
    expect(bridged.error).toBeDefined();
    expect(JSON.stringify(bridged.error)).toMatch(/No tool named \\"ask__roots\\"/);
    // Its own tools work from a snippet.
    const own = await execute(
      alice,
      `import { readTextFile } from "mcp/servers/fs/readTextFile";\nexport default await readTextFile({ path: ${JSON.stringify(join(dir, "notes.txt"))} });`,
    );
    expect(own.result).toEqual({ content: "alice may read this" });
  });

  it("saving a skill type-checks it against the principal's own modules: a hidden tool's cannot be found, as one that does not exist", async () => {
    const skill = (from: string) => ({
      name: "probe",
      description: "Asks.",
      code: `import { ask } from "${from}";\nexport async function probe(input: {}): Promise<unknown> { return ask({}); }\n`,
    });
    const hidden = await tool(alice, "save_skill", skill("mcp/servers/ask/ask"));
    const missing = await tool(alice, "save_skill", skill("mcp/servers/qsk/ask"));
    expect(hidden.isError).toBe(true);
    expect(textOf(hidden).replaceAll("ask/ask", "X")).toBe(textOf(missing).replaceAll("qsk/ask", "X"));
    expect((await tool(bob, "save_skill", skill("mcp/servers/ask/ask"))).isError).toBeFalsy();
  });

  it("call_tool answers a hidden tool as unknown, with suggestions only of tools the principal sees", async () => {
    const hidden = textOf(await tool(alice, "call_tool", { name: "ask__roots", args: {} }));
    expect(hidden).toMatch(UNKNOWN);
    expect(hidden).not.toMatch(/Did you mean[^?]*ask__/);
    expect(textOf(await tool(bob, "call_tool", { name: "fs__read_text_file", args: { path: join(dir, "notes.txt") } }))).toMatch(UNKNOWN);
  });

  it("a read-only rule lets the principal see a tool that writes, and refuses to call it, saying why", async () => {
    expect(await search(alice, "write a file")).toContain("fs__write_file");
    const refused = await tool(alice, "call_tool", { name: "fs__write_file", args: { path: join(dir, "new.txt"), content: "x" } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(
      `fs__write_file is not marked read-only, and the policy rule "readers" lets principal "${principalOf("alice")}" call read-only tools only`,
    );
    const viaRest = await rest(TOKENS.alice, "/v1/tools/fs__write_file/call", { path: join(dir, "new.txt"), content: "x" });
    expect(viaRest.status).toBe(403);
    await expect(readFile(join(dir, "new.txt"))).rejects.toThrow();
  });

  it("a background job runs under its principal's policy, and no more jobs at once than the rule allows", async () => {
    const started = textOf(await tool(alice, "call_tool", { name: "ask__roots", args: {}, background: true }));
    const id = /job (\S+) in the background/.exec(started)?.[1] as string;
    const output = textOf(await tool(alice, "jobs", { action: "output", ids: [id], wait_up_to: 30 }));
    expect(output).toMatch(/No tool named "ask__roots"/);

    const slow = textOf(await tool(bob, "call_tool", { name: "ask__slow", args: { ms: 5_000 }, background: true }));
    const slowId = /job (\S+) in the background/.exec(slow)?.[1] as string;
    const second = await tool(bob, "call_tool", { name: "ask__slow", args: { ms: 10 }, background: true });
    expect(textOf(second)).toMatch(/already has 1 background jobs, as many as its policy allows at once \(concurrentJobs: 1\)/);
    await tool(bob, "jobs", { action: "cancel", ids: [slowId] });
  });

  it("calls per minute hold for the principal across surfaces, and REST answers 429", async () => {
    const carol = await connect(TOKENS.carol);
    const args = { result: { content: [{ type: "text", text: "ok" }] } };
    expect(textOf(await tool(carol, "call_tool", { name: "ask__result", args }))).toBe("ok");
    expect((await rest(TOKENS.carol, "/v1/tools/ask__result/call", args)).status).toBe(200);
    const third = await rest(TOKENS.carol, "/v1/tools/ask__result/call", args);
    expect(third.status).toBe(429);
    expect((third.body.error as { message: string }).message).toContain(
      `the policy rule "metered" allows principal "${principalOf("carol")}" 2 calls a minute`,
    );
  });

  it("a token's groups match a rule by group, over MCP and REST alike", async () => {
    const erin = await connect(TOKENS.erin);
    expect(textOf(await tool(erin, "call_tool", { name: "ask__result", args: { result: { content: [{ type: "text", text: "team" }] } } }))).toBe("team");
    expect(textOf(await tool(erin, "call_tool", { name: "ask__roots", args: {} }))).toMatch(UNKNOWN);
    const listed = await rest(TOKENS.erin, "/v1/tools");
    expect((listed.body.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(["ask__result"]);
  });

  it("a principal no rule matches sees nothing (the default is deny)", async () => {
    const dave = await connect(TOKENS.dave);
    expect(textOf(await tool(dave, "list_modules"))).not.toMatch(/mcp\/servers\/(fs|ask)/);
    expect(textOf(await tool(dave, "call_tool", { name: "fs__read_text_file", args: { path: join(dir, "notes.txt") } }))).toMatch(UNKNOWN);
  });

  it("the audit log names the principal and the rule that decided each refusal", async () => {
    await plugins.close();
    const lines = (await readFile(join(dir, "audit.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({ principal: principalOf("alice"), server: "fs", tool: "write_file", outcome: "refused", by: "policy", rule: "readers" }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ principal: principalOf("alice"), server: "ask", tool: "roots", outcome: "refused", by: "policy" }));
    expect(lines).toContainEqual(expect.objectContaining({ principal: principalOf("alice"), tool: "read_text_file", outcome: "ok", rule: "readers" }));
  });
});
