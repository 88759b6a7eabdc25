import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { modernServerPath } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_HEADERS, TOKENS, bearer, serve, type Served } from "./helpers";

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

describe("the server an answer names", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ mode: "passthrough" }, { m: { command: process.execPath, args: [modernServerPath, "--ask-beyond-tools"] } });
  }, 30_000);
  afterAll(() => s.close());

  it("is codemux for a 2026-07-28 client, never the 2026-era downstream server that answered the call", async () => {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const response = await fetch(`${s.url}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice), "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "m__echo" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "m__echo", arguments: { text: "hi" }, _meta: meta } }),
    });
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: { content: unknown; _meta: Record<string, { name?: string }> } };
    expect(result.content).toEqual([{ type: "text", text: "hi" }]);
    expect(result._meta[SERVER_INFO]?.name).toBe("codemux");
  });

  it("is not the downstream server's in a relayed prompt or resource either (each asks the client first, as that server does)", async () => {
    const client = new Client({ name: "old", version: "1" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "yes" } }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
    try {
      const prompt = await client.getPrompt({ name: "m__ask", arguments: { message: "q?" } });
      expect(JSON.stringify(prompt.messages)).toContain("yes");
      expect(prompt._meta?.[SERVER_INFO]).toBeUndefined();
      const resource = await client.readResource({ uri: "ask://hello" });
      expect(JSON.stringify(resource.contents)).toContain("yes");
      expect(resource._meta?.[SERVER_INFO]).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it("is not stamped into a 2025 client's answer by the downstream server either", async () => {
    const client = new Client({ name: "old", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
    try {
      const result = await client.callTool({ name: "m__echo", arguments: { text: "hi" } });
      expect(result.content).toEqual([{ type: "text", text: "hi" }]);
      expect(result._meta).toBeDefined();
      expect(result._meta?.[SERVER_INFO]).toBeUndefined();
    } finally {
      await client.close();
    }
  });
});
