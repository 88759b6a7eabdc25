import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { wrapWithProxy, type Plugin, type PluginCall } from "../src/index";

// The same wrapper on SDK v2's McpServer: its handlers take a context (`ctx.mcpReq.signal`), not SDK 1.x's `extra`.
describe("wrapWithProxy on SDK v2", () => {
  it("runs plugins around a v2 McpServer's tools, with the call's abort signal", async () => {
    const server = new McpServer({ name: "notes", version: "1.0.0" });
    server.registerTool("echo", { description: "Echoes.", inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
      content: [{ type: "text", text: `echo ${text}` }],
    }));
    const seen: PluginCall[] = [];
    const watch: Plugin = {
      name: "watch",
      beforeCall: (c) => {
        seen.push(c);
        return { action: "continue", arguments: { text: `${String(c.arguments.text)}+` } };
      },
      afterCall: (_c, result) => ({ ...result, content: [...result.content, { type: "text", text: "(watched)" }] }),
    };
    expect(await wrapWithProxy(server, { plugins: [watch] })).toBe(server);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    const result = await client.callTool({ name: "echo", arguments: { text: "a" } });
    expect((result.content as Array<{ text: string }>).map((b) => b.text)).toEqual(["echo a+", "(watched)"]);
    expect(seen.map((c) => [c.name, c.principal, c.signal instanceof AbortSignal])).toEqual([["notes__echo", "local", true]]);
    await client.close();
    await server.close();
  });
});
