import { estimateTokens, type ScanFinding, verdictAtLeast } from "@codemux/core";
import type { CodemuxCalls, CodemuxQueries } from "@codemux/server";

/** What the status lines read of a core. */
type Served = Pick<CodemuxCalls, "mode" | "surface"> & Pick<CodemuxQueries, "status" | "tools" | "scanReports" | "scanMode">;
import { launchCommand } from "./launch";

export function serverTable(core: Pick<CodemuxQueries, "status">): string {
  // A start is a state, shown as one (`starting (3 s)`); then the protocol the server speaks; the last column says why a server failed, or what its state means.
  const rows = core
    .status()
    .map((s) =>
      s.state === "connecting"
        ? [s.name, s.detail ?? s.state, `${s.toolCount} tools`, "", ""]
        : [s.name, s.state, `${s.toolCount} tools`, s.protocol ?? "", s.error ?? s.detail ?? ""],
    );
  if (rows.length === 0) return "  (no servers configured)";
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  return rows
    .map(
      (r) =>
        `  ${r
          .map((cell, i) => (i < 4 ? cell.padEnd(widths[i] as number) : cell))
          // No server has connected yet: no protocol column.
          .filter((_, i) => i !== 3 || widths[3] !== 0)
          .join("  ")
          .trimEnd()}`,
    )
    .join("\n");
}

const ITEM_KINDS = { resources: "resource", resourceTemplates: "resource template", prompts: "prompt", skills: "skill" } as const;

/** What the scan found above `info` (security.scan), one line per tool or instructions; empty when nothing. */
export function scanLines(core: Pick<CodemuxQueries, "scanReports" | "scanMode">): string {
  const lines: string[] = [];
  const found = (findings: readonly ScanFinding[]) =>
    findings
      .filter((f) => verdictAtLeast(f.severity, "warn"))
      .map((f) => `${f.rule} in ${f.path}`)
      .join(", ");
  for (const report of core.scanReports()) {
    if (report.instructions && verdictAtLeast(report.instructions.verdict, "warn"))
      lines.push(
        `  ${report.server} instructions  ${report.instructions.verdict}${report.instructions.held ? ", not shown to the model" : ""}: ${found(report.instructions.findings)}`,
      );
    for (const tool of report.tools.filter((t) => verdictAtLeast(t.verdict, "warn"))) {
      const held =
        tool.shown === "none"
          ? `, held back (codemux approve ${tool.qualifiedName})`
          : tool.shown === "approved"
            ? ", the model sees its approved definition"
            : "";
      lines.push(`  ${tool.qualifiedName}  ${tool.verdict}${held}: ${found(tool.findings)}`);
    }
    for (const item of report.items)
      lines.push(
        `  ${report.server} ${ITEM_KINDS[item.kind]} ${JSON.stringify(item.id)}  ${item.verdict}${item.held ? ", held back" : ""}: ${found(item.findings)}`,
      );
  }
  return lines.length ? `Scan (security.scan ${core.scanMode}) found:\n${lines.join("\n")}\n` : "";
}

/** Tokens of the upfront tool list in a mode, and of every downstream tool listed plainly, for comparison. */
export async function upfrontTokens(core: Pick<CodemuxCalls, "surface">): Promise<{ upfront: number; direct: number }> {
  const [upfront, direct] = await Promise.all([core.surface().listTools(), core.surface("passthrough").listTools()]);
  return { upfront: estimateTokens(JSON.stringify(upfront)), direct: estimateTokens(JSON.stringify(direct)) };
}

/** Quotes one word for a POSIX shell only when it needs it. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The lines to paste into MCP clients, in the form `codemux install` writes: `node <this CLI> ...` (codemux is not on the npm registry yet). */
export function clientSnippets(options: string[]): string[] {
  const entry = launchCommand(options);
  return [
    'Add codemux to Claude Desktop or Cursor ("mcpServers" in claude_desktop_config.json or ~/.cursor/mcp.json):',
    `  ${JSON.stringify({ mcpServers: { codemux: entry } })}`,
    "Claude Code:",
    `  claude mcp add codemux -- ${[entry.command, ...entry.args].map(shellWord).join(" ")}`,
    'VS Code (.vscode/mcp.json, "servers"):',
    `  ${JSON.stringify({ servers: { codemux: { type: "stdio", ...entry } } })}`,
    "Or let codemux do it: codemux install claude-desktop|cursor|claude-code|vscode --dry-run",
  ];
}

/** What a person who started codemux in a terminal needs: what is connected, what it saves, how to add it to a client. */
export async function terminalStatus(core: Served, options: string[], source: string): Promise<string> {
  const { upfront, direct } = await upfrontTokens(core);
  const saved = direct > upfront ? ` instead of ~${direct.toLocaleString("en-US")} (${Math.round((1 - upfront / direct) * 100)}% less)` : "";
  return [
    `codemux: ${core.tools().size} tools from ${core.status().length} servers (config: ${source}), mode ${core.mode}`,
    serverTable(core),
    `Upfront tool list: ~${upfront.toLocaleString("en-US")} tokens${saved}.`,
    "",
    ...clientSnippets(options),
    ...(source === "built-in default"
      ? ["(Without --config, codemux serves the built-in default: a filesystem server on the --root folder, and a memory server.)"]
      : []),
    "",
    "Serving MCP on stdin/stdout; press Ctrl+C to stop.",
  ].join("\n");
}
