import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, serve, textOf, TOKENS, type Served } from "./helpers";

/**
 * A server with per-principal credentials (`credentials: "per-principal"`) over real HTTP: its downstream answers
 * by bearer token (the operator's in the entry, alice's in `perPrincipal`, bob has none), and lists each account's
 * own resources, templates and prompts, with descriptions that say whose they are.
 */
const ACCOUNTS: Record<string, string> = { "Bearer operator-key": "operator", "Bearer alice-key": "alice" };

let downstream: Server;
/** Which account asked the downstream what: `alice resources/list`. */
const asked: string[] = [];
let served: Served;
const clients: Client[] = [];

/** An MCP server of one account: its own note, note template and prompt. */
function accountServer(account: string): McpServer {
  const mcp = new McpServer({ name: "accounts", version: "1.0.0" });
  mcp.registerTool("whoami", { description: "Says whose account this is." }, async () => ({ content: [{ type: "text", text: account }] }));
  mcp.registerResource("plan", `note://${account}/plan`, { description: `${account}'s private plan` }, async (uri) => ({
    contents: [{ uri: uri.href, text: `${account}'s plan: ship on Friday` }],
  }));
  mcp.registerResource(
    "notes",
    new ResourceTemplate(`note://${account}/{id}`, { list: undefined }),
    { description: `${account}'s notes by id` },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `${account}'s note ${String(id)}` }] }),
  );
  mcp.registerPrompt(`${account}_brief`, { description: `${account}'s daily brief` }, async () => ({
    messages: [{ role: "user", content: { type: "text", text: `brief of ${account}` } }],
  }));
  return mcp;
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

beforeAll(async () => {
  downstream = createServer(async (req, res) => {
    const account = ACCOUNTS[req.headers.authorization ?? ""];
    if (!account) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unknown key"}');
      return;
    }
    const body = await bodyOf(req);
    const method = (body as { method?: string } | undefined)?.method;
    if (method) asked.push(`${account} ${method}`);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close());
    await accountServer(account).connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => downstream.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}/mcp`;
  served = await serve(
    {},
    {
      acct: {
        url,
        headers: { Authorization: "Bearer operator-key" },
        credentials: "per-principal",
        perPrincipal: { "token:alice": { headers: { Authorization: "Bearer alice-key" } } },
      },
    },
  );
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await served?.close();
  downstream?.closeAllConnections();
  await new Promise((resolve) => downstream?.close(resolve));
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "listing", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: bearer(token) } }));
  clients.push(client);
  return client;
}

const BOB_NEEDS =
  'needs login (token:bob has no credentials of its own for it): the operator adds them to its entry under "perPrincipal": { "token:bob": { "headers": { "Authorization": ... } } }';

describe("a server with per-principal credentials: what each principal sees comes from its own connection", () => {
  it("lists a principal its own resources, templates and prompts, never the operator's; one without credentials gets how to get them instead", async () => {
    const [alice, bob] = [await connect(TOKENS.alice), await connect(TOKENS.bob)];
    const aliceResources = (await alice.listResources()).resources;
    expect(aliceResources.map((r) => [r.uri, r.description])).toEqual([["codemux://acct/note://alice/plan", "[acct] alice's private plan"]]);
    expect((await alice.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(["note://alice/{id}"]);
    expect((await alice.listPrompts()).prompts.map((p) => [p.name, p.description])).toEqual([["acct__alice_brief", "[acct] alice's daily brief"]]);

    const bobResources = (await bob.listResources()).resources;
    expect(bobResources).toEqual([
      { uri: "codemux://acct/", name: "acct: log in to see its resources", description: `[acct] Server "acct" is unavailable: ${BOB_NEEDS}` },
    ]);
    expect((await bob.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await bob.listPrompts()).prompts).toEqual([{ name: "acct__log_in", description: `[acct] Server "acct" is unavailable: ${BOB_NEEDS}` }]);

    for (const listing of [aliceResources, bobResources]) expect(JSON.stringify(listing)).not.toMatch(/note:\/\/operator|operator's/);
    // The operator's key listed the tools, and nothing else.
    expect(asked.filter((line) => line.startsWith("operator ")).map((line) => line.split(" ")[1])).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^(resources|prompts)\//)]),
    );
    expect(asked).toContain("operator tools/list");
  });

  it("reads and gets through the principal's own connection: alice her own, bob nothing but how to get credentials", async () => {
    const [alice, bob] = [await connect(TOKENS.alice), await connect(TOKENS.bob)];
    expect((await alice.readResource({ uri: "codemux://acct/note://alice/plan" })).contents).toEqual([
      { uri: "codemux://acct/note://alice/plan", text: "alice's plan: ship on Friday" },
    ]);
    expect((await alice.readResource({ uri: "note://alice/7" })).contents[0]).toMatchObject({ text: "alice's note 7" });
    // The operator's resource through alice's connection is alice's account asking: the downstream does not have it for her.
    await expect(alice.readResource({ uri: "codemux://acct/note://operator/plan" })).rejects.toThrow();
    expect((await alice.getPrompt({ name: "acct__alice_brief" })).messages[0]?.content).toEqual({ type: "text", text: "brief of alice" });

    for (const attempt of [
      () => bob.readResource({ uri: "codemux://acct/note://operator/plan" }),
      () => bob.readResource({ uri: "codemux://acct/" }),
      () => bob.getPrompt({ name: "acct__operator_brief" }),
    ])
      await expect(attempt()).rejects.toThrow(BOB_NEEDS.slice(0, 60));
    // Nor does bob act downstream as the operator: his call gets the same sentence.
    const call = await bob.callTool({ name: "call_tool", arguments: { name: "acct__whoami", args: {} } });
    expect(textOf(call)).toContain(BOB_NEEDS);
    expect(textOf(await alice.callTool({ name: "call_tool", arguments: { name: "acct__whoami", args: {} } }))).toBe("alice");
    expect(
      asked.filter((line) => line.startsWith("operator ") && !/ (initialize|notifications\/initialized|tools\/list|server\/discover)$/.test(line)),
    ).toEqual([]);
  });

  it("search finds none of the operator's resources or prompts, and subscriptions to such a server's resources are refused", async () => {
    const bob = await connect(TOKENS.bob);
    const found = textOf(await bob.callTool({ name: "search_tools", arguments: { query: "private plan daily brief", detail: "full" } }));
    expect(found).not.toMatch(/note:\/\/operator|operator's/);
    const alice = await connect(TOKENS.alice);
    await expect(alice.subscribeResource({ uri: "codemux://acct/note://alice/plan" })).rejects.toThrow(
      `The resources of "acct" are each principal's own, so codemux does not subscribe to them; read the resource again to see a change.`,
    );
  });
});
