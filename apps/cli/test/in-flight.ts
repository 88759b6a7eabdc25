import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** A 2025 client with a slow call running on it (its progress has arrived, so the call is in flight). */
export async function callInFlight(url: string, headers: Record<string, string>, { tool, args }: { tool: string; args: Record<string, unknown> }) {
  const client = new Client({ name: "drain", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  let running!: () => void;
  const inFlight = new Promise<void>((resolve) => (running = resolve));
  const answer = client.callTool({ name: "call_tool", arguments: { name: tool, args } }, undefined, { onprogress: () => running(), timeout: 120_000 }).then(
    (r) => ({ text: textOf(r) }),
    (error: Error) => ({ error: error.message }),
  );
  await inFlight;
  return { client, answer, session: transport.sessionId ?? "" };
}
