import { META_TOOLS, type Codemux } from "@codemux/server";

/** A rough count (4 characters a token); `pnpm bench` measures with a real tokenizer. */
const tokens = (value: unknown) => Math.round(JSON.stringify(value).length / 4);

export function serverTable(core: Codemux): string {
  const rows = core.status().map((s) => [s.name, s.state, `${s.toolCount} tools`, s.error ?? ""]);
  if (rows.length === 0) return "  (no servers configured)";
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join("  ").trimEnd()}`).join("\n");
}

/** What a person who started codemux in a terminal needs: what is connected, what it saves, how to add it to a client. */
export function terminalStatus(core: Codemux, launch: { command: string; args: string[] }, source: string): string {
  const direct = tokens(core.passthroughTools());
  const upfront = tokens(META_TOOLS);
  const saved = direct > upfront ? ` instead of ~${direct.toLocaleString("en-US")} (${Math.round((1 - upfront / direct) * 100)}% less)` : "";
  const entry = { command: launch.command, args: launch.args };
  return [
    `codemux: ${core.catalog.size} tools from ${core.status().length} servers (config: ${source}), mode ${core.mode}`,
    serverTable(core),
    core.mode === "code" ? `Upfront tool list: ~${upfront.toLocaleString("en-US")} tokens${saved}.` : `Passthrough: the client sees all ${core.catalog.size} tools.`,
    "",
    "Add codemux to Claude Desktop, Claude Code or Cursor (\"mcpServers\"):",
    `  ${JSON.stringify({ mcpServers: { codemux: entry } })}`,
    "or VS Code (.vscode/mcp.json, \"servers\"):",
    `  ${JSON.stringify({ servers: { codemux: { type: "stdio", ...entry } } })}`,
    ...(source === "built-in default"
      ? ["(Without --config, codemux serves the built-in default: a filesystem server on the directory it starts in, and a memory server.)"]
      : []),
    "",
    "Serving MCP on stdin/stdout; press Ctrl+C to stop.",
  ].join("\n");
}
