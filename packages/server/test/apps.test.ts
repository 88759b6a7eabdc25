import { APPS_EXTENSION, APP_MIME_TYPE, type SessionInfo } from "@codemux/core";
import { appServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer, policiesOf } from "../src/index";
import { config, node, textOf, servicesOf } from "./helpers";

/**
 * MCP Apps through codemux without a browser: two servers whose app has the same ui:// URI, in modes
 * passthrough and code, to a host that declares the extension and to a client that does not; tools only
 * an app may call, and a policy that hides one of the servers.
 */
const UI = { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
const origins: Array<{ name: string; origin: string }> = [];
let core: Codemux;

beforeAll(async () => {
  const policies = policiesOf({ policies: { rules: [{ name: "only-a", principals: ["token:alice"], tools: ["a"] }] } }, "codemux.json");
  core = new Codemux({
    config: config({ a: node(appServerPath, "--name", "a"), b: node(appServerPath, "--name", "b") }),
    middleware: [
      async (ctx, next) => {
        origins.push({ name: ctx.entry.qualifiedName, origin: ctx.origin });
        return next(ctx);
      },
    ],
    ...(policies ? { policies } : {}),
  });
  core.start();
  await core.ready(20_000);
}, 30_000);
afterAll(async () => {
  await core.close();
});

/** A client peer that declared `capabilities` (a session used directly, as the front ends do). */
const peerOf = (capabilities: Record<string, unknown>) => ({
  capabilities: () => capabilities,
  elicit: () => Promise.reject(new Error("no")),
  createMessage: () => Promise.reject(new Error("no")),
  listRoots: () => Promise.reject(new Error("no")),
});

async function open(mode: "code" | "passthrough", capabilities: Record<string, unknown>): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions, { mode }).connect(serverSide);
  const client = new Client({ name: "host", version: "1.0.0" }, { capabilities });
  await client.connect(clientSide);
  return client;
}

const names = (tools: Tool[]) => tools.map((t) => t.name).sort();
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;

describe("MCP Apps, passthrough", () => {
  it("lists each app tool renamed, its _meta.ui kept and its ui:// URI under its server, the same URI resources/list shows", async () => {
    const host = await open("passthrough", UI);
    const { tools } = await host.listTools();
    const showA = tools.find((t) => t.name === "a__show_sales");
    expect(showA?._meta).toMatchObject({ ui: { resourceUri: "ui://a/charts/sales.html" }, "ui/resourceUri": "ui://a/charts/sales.html" });
    expect(tools.find((t) => t.name === "b__show_sales")?._meta).toMatchObject({ ui: { resourceUri: "ui://b/charts/sales.html" } });
    expect(tools.find((t) => t.name === "a__refresh_sales")?._meta).toMatchObject({ ui: { resourceUri: "ui://a/charts/sales.html", visibility: ["app"] } });
    const { resources } = await host.listResources();
    const listed = resources.filter((r) => r.uri.startsWith("ui://")).sort((x, y) => x.uri.localeCompare(y.uri));
    expect(listed.map((r) => r.uri)).toEqual(["ui://a/charts/sales.html", "ui://b/charts/sales.html"]);
    expect(listed[0]).toMatchObject({
      mimeType: APP_MIME_TYPE,
      _meta: { ui: { domain: "a.apps.example.com", csp: { connectDomains: ["https://api.example.com"] } } },
    });
    expect(host.getServerCapabilities()?.extensions).toHaveProperty([APPS_EXTENSION]);
    await host.close();
  });

  it("reads each app from its own server by its own URI, MIME type and _meta.ui as the server gave them", async () => {
    const host = await open("passthrough", UI);
    for (const server of ["a", "b"]) {
      const { contents } = await host.readResource({ uri: `ui://${server}/charts/sales.html` });
      expect(contents[0]).toMatchObject({
        uri: `ui://${server}/charts/sales.html`,
        mimeType: APP_MIME_TYPE,
        _meta: { ui: { domain: `${server}.apps.example.com`, permissions: { clipboardWrite: {} }, prefersBorder: true } },
      });
      expect((contents[0] as { text: string }).text).toContain(`<title>Sales (${server})</title>`);
    }
    await expect(host.readResource({ uri: "ui://nobody/charts/sales.html" })).rejects.toThrow(/No server offers the resource/);
    await host.close();
  });

  it("shows a client that does not render apps no tool only an app may call, and answers its call as unknown", async () => {
    const plain = await open("passthrough", {});
    const listed = names((await plain.listTools()).tools);
    expect(listed).toContain("a__show_sales");
    expect(listed).not.toContain("a__refresh_sales");
    // Unknown to a client that does not render apps: the JSON-RPC error both eras answer an unoffered name with.
    await expect(call(plain, "a__refresh_sales", { region: "north" })).rejects.toThrow(/Unknown tool "a__refresh_sales"/);
    await expect(call(plain, "refresh_sales", { region: "north" })).rejects.toThrow(/Unknown tool "refresh_sales"/);
    await plain.close();
  });

  it("takes an app's call by its server's own tool name from the server whose app the host read, with origin app", async () => {
    const host = await open("passthrough", UI);
    expect(textOf(await call(host, "refresh_sales", { region: "north" }))).toMatch(/No tool named/);
    await host.readResource({ uri: "ui://b/charts/sales.html" });
    origins.length = 0;
    const answer = await call(host, "refresh_sales", { region: "north" });
    expect(answer.structuredContent).toMatchObject({ region: "north", server: "b" });
    expect(origins).toEqual([{ name: "b__refresh_sales", origin: "app" }]);
    expect((await call(host, "b__refresh_sales", { region: "south" })).structuredContent).toMatchObject({ server: "b" });
    // Both apps read: a bare name could be either server's, so it is neither.
    await host.readResource({ uri: "ui://a/charts/sales.html" });
    expect(textOf(await call(host, "refresh_sales", { region: "north" }))).toMatch(/No tool named/);
    await host.close();
  });
});

describe("MCP Apps, the extension negotiated", () => {
  it("declares it to a 2026 server on a call only when the calling client declared it", async () => {
    const host = await open("passthrough", UI);
    const plain = await open("passthrough", {});
    expect(JSON.parse(textOf(await call(host, "a__seen_extensions")))).toContain(APPS_EXTENSION);
    expect(JSON.parse(textOf(await call(plain, "a__seen_extensions")))).not.toContain(APPS_EXTENSION);
    await Promise.all([host.close(), plain.close()]);
  });
});

describe("MCP Apps, mode code", () => {
  it("lists a host that renders apps the app tools beside the meta-tools, and any other client the meta-tools alone", async () => {
    const plain = await open("code", {});
    const host = await open("code", UI);
    const meta = names((await plain.listTools()).tools);
    expect(meta).not.toContain("a__show_sales");
    expect(names((await host.listTools()).tools)).toEqual([...meta, "a__refresh_sales", "a__show_sales", "b__refresh_sales", "b__show_sales"].sort());
    const shown = (await host.listTools()).tools.find((t) => t.name === "a__show_sales");
    expect(shown?._meta).toMatchObject({ ui: { resourceUri: "ui://a/charts/sales.html" } });
    origins.length = 0;
    expect((await call(host, "a__show_sales", { region: "east" })).structuredContent).toMatchObject({ region: "east", server: "a" });
    expect(origins).toEqual([{ name: "a__show_sales", origin: "call_tool" }]);
    // The plain client calls only meta-tools by name, as before.
    await expect(call(plain, "a__show_sales", { region: "east" })).rejects.toThrow(/Unknown tool "a__show_sales".*call_tool/);
    await Promise.all([plain.close(), host.close()]);
  });

  it("in mode dispatch too: the app tools beside its one tool to a host that renders apps, that tool alone to any other client", async () => {
    const host = { ...core.session(), peer: peerOf(UI) };
    const plain = { ...core.session(), peer: peerOf({}) };
    expect((await core.surface("dispatch").listTools(plain)).map((t) => t.name)).toEqual(["codemux"]);
    expect((await core.surface("dispatch").listTools(host)).map((t) => t.name).sort()).toEqual(
      ["codemux", "a__refresh_sales", "a__show_sales", "b__refresh_sales", "b__show_sales"].sort(),
    );
    const answer = await core.surface("dispatch").callTool("a__show_sales", { region: "west" }, { session: host, origin: "dispatch" });
    expect((answer as CallToolResult).structuredContent).toMatchObject({ region: "west", server: "a" });
  });

  it("keeps tools only an app may call out of search, modules and call_tool, for every client", async () => {
    const host = await open("code", UI);
    expect(textOf(await call(host, "search_tools", { query: "refresh the chart's figures" }))).not.toContain("refresh_sales");
    expect(textOf(await call(host, "list_modules", { path: "mcp/servers/a" }))).not.toMatch(/refreshSales/);
    expect(textOf(await call(host, "call_tool", { name: "a__refresh_sales", args: { region: "x" } }))).toMatch(/No tool named "a__refresh_sales"/);
    const snippet = 'import { refreshSales } from "mcp/servers/a/refreshSales";\nexport default await refreshSales({ region: "x" });';
    expect(textOf(await call(host, "execute_code", { code: snippet }))).toMatch(/refreshSales/);
    expect(textOf(await call(host, "execute_code", { code: snippet }))).not.toMatch(/"refreshes"/);
    await host.close();
  });
});

describe("MCP Apps under a policy", () => {
  const alice = (ui: boolean): SessionInfo => ({
    id: `alice-${ui}`,
    principal: "token:alice",
    peer: peerOf(ui ? UI : {}),
  });

  it("hides a hidden server's apps and ui:// resources with it: listed nowhere, read and called as unknown", async () => {
    const session = alice(true);
    for (const mode of ["passthrough", "code"]) {
      const listed = (await core.surface(mode).listTools(session)).map((t) => t.name);
      expect(listed).toContain("a__refresh_sales");
      expect(listed.filter((n) => n.startsWith("b__"))).toEqual([]);
    }
    const resources = await servicesOf(core).features.listResources(session);
    expect(resources.map((r) => r.uri).filter((u) => u.startsWith("ui://"))).toEqual(["ui://a/charts/sales.html"]);
    await expect(servicesOf(core).features.readResource("ui://b/charts/sales.html", { session, origin: "resources/read" })).rejects.toThrow(
      /No server offers the resource/,
    );
    const refused = await core.surface("passthrough").callTool("b__refresh_sales", { region: "x" }, { session, origin: "passthrough" });
    expect(textOf(refused as CallToolResult)).toMatch(/No tool named "b__refresh_sales"/);
    expect(
      ((await core.surface("passthrough").callTool("a__refresh_sales", { region: "x" }, { session, origin: "passthrough" })) as CallToolResult)
        .structuredContent,
    ).toMatchObject({ server: "a" });
  });
});
