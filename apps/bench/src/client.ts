import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { cliPath } from "./paths";

/** An SDK client on the built codemux CLI over stdio, as an MCP client would run it. */
export async function connectCodemux(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "codemux-bench", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cliPath(), ...args, "--log-level", "error"],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "inherit",
    }),
  );
  return client;
}

export async function connectCommand(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: "codemux-bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  return client;
}

export function textOf(result: unknown): string {
  return ((result as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
}
