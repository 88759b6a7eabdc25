import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CannotWrapError, cachePlugin, guardPlugin, wrapWithProxy, type Plugin, type PluginCall } from "../src/index";
import { connectClient, textOf, type ClientOptions } from "./helpers";

async function clientOf(server: McpServer | Server, options: ClientOptions = {}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = connectClient(options);
  await client.connect(clientSide);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;

describe("wrapWithProxy", () => {
  it("runs plugins around an McpServer's tools registered before and after wrapping, and changes nothing else", async () => {
    const server = new McpServer({ name: "notes", version: "1.0.0" });
    server.registerTool(
      "old",
      { description: "Registered before.", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
      async ({ text }) => ({ content: [{ type: "text", text: `old ${text}` }] }),
    );
    server.registerResource("readme", "notes://readme", { description: "A resource." }, async () => ({ contents: [{ uri: "notes://readme", text: "hello" }] }));
    server.registerPrompt("greet", { description: "A prompt." }, () => ({ messages: [{ role: "user", content: { type: "text", text: "hi" } }] }));
    const seen: PluginCall[] = [];
    const watch: Plugin = {
      name: "watch",
      beforeCall: (c) => {
        seen.push(c);
        return c.tool === "new" ? { action: "continue", arguments: { text: `${String(c.arguments.text)}+` } } : undefined;
      },
      afterCall: (_c, result) => ({ ...result, content: [...result.content, { type: "text", text: "(watched)" }] }),
    };
    const wrapped = await wrapWithProxy(server, { plugins: [watch] });
    expect(wrapped).toBe(server);
    server.registerTool("new", { description: "Registered after.", inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: "text", text: `new ${text}` }],
    }));

    const client = await clientOf(server);
    expect(textOf(await call(client, "old", { text: "a" }))).toBe("old a\n(watched)");
    expect(textOf(await call(client, "new", { text: "b" }))).toBe("new b+\n(watched)");
    expect(seen.map((c) => [c.name, c.server, c.tool, c.origin, c.principal, c.annotations.readOnlyHint])).toEqual([
      ["notes__old", "notes", "old", "call_tool", "local", true],
      ["notes__new", "notes", "new", "call_tool", "local", undefined],
    ]);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["old", "new"]);
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["readme"]);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["greet"]);
    expect((await call(client, "old", { text: 3 })).isError).toBe(true);
    await client.close();
  });

  it("wraps the first tool of an McpServer that had none when wrapped (its handler is installed late)", async () => {
    const server = new McpServer({ name: "late", version: "1.0.0" });
    await wrapWithProxy(server, { plugins: [cachePlugin({ tools: ["late__count"] })] });
    let n = 0;
    server.registerTool("count", { description: "Count." }, async () => ({ content: [{ type: "text", text: String(++n) }] }));
    const client = await clientOf(server);
    expect(textOf(await call(client, "count"))).toBe("1");
    expect(textOf(await call(client, "count"))).toBe("1");
    await client.close();
  });

  it("asks through elicitation and refuses as a readable tool error, as in codemux", async () => {
    const server = new McpServer({ name: "files", version: "1.0.0" });
    let deleted = 0;
    server.registerTool("delete_all", { description: "Delete everything.", annotations: { destructiveHint: true } }, async () => ({
      content: [{ type: "text", text: `deleted ${++deleted}` }],
    }));
    await wrapWithProxy(server, { plugins: [guardPlugin()] });
    const yes = await clientOf(server, { elicit: () => ({ action: "accept", content: { confirm: true } }) });
    expect(textOf(await call(yes, "delete_all"))).toBe("deleted 1");
    await yes.close();

    const server2 = new McpServer({ name: "files", version: "1.0.0" });
    server2.registerTool("delete_all", { description: "Delete everything.", annotations: { destructiveHint: true } }, async () => ({
      content: [{ type: "text", text: `deleted ${++deleted}` }],
    }));
    await wrapWithProxy(server2, { plugins: [guardPlugin()] });
    const no = await clientOf(server2, { elicit: () => ({ action: "decline" }) });
    const refused = await call(no, "delete_all");
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^The user declined to run files__delete_all/);
    expect(deleted).toBe(1);
    await no.close();
  });

  it("wraps a low-level Server's tools/call handler, set before or after wrapping", async () => {
    const server = new Server({ name: "low", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: "echo", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }],
    }));
    const names: string[] = [];
    await wrapWithProxy(server, { plugins: [{ name: "names", beforeCall: (c) => void names.push(`${c.name}:${String(c.annotations.readOnlyHint)}`) }] });
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: "text", text: JSON.stringify(request.params.arguments) }] }));
    const client = await clientOf(server);
    expect(textOf(await call(client, "echo", { a: 1 }))).toBe('{"a":1}');
    expect(names).toEqual(["low__echo:true"]);
    const again = await wrapWithProxy(server, { plugins: [] }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(CannotWrapError);
    expect((again as Error).message).toMatch(/already wrapped; pass all plugins in one call/);
    await client.close();
  });

  it("refuses at wrap time, before any plugin starts, an SDK whose request handlers are not where it reaches them", async () => {
    const server = new Server({ name: "moved", version: "1.0.0" }, { capabilities: { tools: {} } });
    // What a later SDK looks like to the wrapper: no private handler map.
    Object.defineProperty(server, "_requestHandlers", { value: {} });
    const started: string[] = [];
    const error = await wrapWithProxy(server, { plugins: [{ name: "p", init: () => void started.push("p") }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CannotWrapError);
    expect((error as CannotWrapError).code).toBe("CANNOT_WRAP");
    expect((error as Error).message).toMatch(
      /keeps its request handlers where codemux cannot wrap them .*use @modelcontextprotocol\/sdk 1\.32\.2 or @modelcontextprotocol\/server 2\.4\.0/,
    );
    expect(started).toEqual([]);
  });

  it("runs the README's example", async () => {
    const script = fileURLToPath(new URL("../examples/wrap-server.mjs", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [script]);
    expect(stdout).toBe(
      [
        "get_invoice: invoice 7: 42 EUR (lookup 1), api key [REDACTED:api-key]",
        "get_invoice: invoice 7: 42 EUR (lookup 1), api key [REDACTED:api-key] (cached)",
        "ping: pong",
        "audit lines: 3",
        "",
      ].join("\n"),
    );
  });
});

describe("the README", () => {
  it("shows the example file as it is", async () => {
    const { readFileSync } = await import("node:fs");
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const example = readFileSync(fileURLToPath(new URL("../examples/wrap-server.mjs", import.meta.url)), "utf8");
    expect(readme).toContain(example);
  });
});
