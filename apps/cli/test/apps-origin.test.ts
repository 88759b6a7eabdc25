import { APPS_EXTENSION, APP_MIME_TYPE } from "@codemux/core";
import { appServerPath, until } from "@codemux/test-servers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCli, stopAll } from "./serve-cli";

/**
 * An MCP App's calls through a running codemux with its plugins: the audit log records them with origin `app`,
 * and the principal's policy (its calls per minute) counts and refuses them as any call.
 */
const TOKENS = { alice: "alice-apps-origin-0123456789" };
let dir: string;
let home: string;
const started: ChildProcess[] = [];
let host: Client;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-apps-origin-"));
  home = join(dir, ".codemux");
  const server = (name: string) => ({ command: process.execPath, args: [appServerPath, "--name", name] });
  const config = join(dir, "codemux.json");
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: { a: server("a"), b: server("b") },
      plugins: { audit: {} },
      policies: { rules: [{ name: "apps", principals: ["token:alice"], tools: ["a", "b"], callsPerMinute: 2 }] },
    }),
  );
  const env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: home };
  const tokens = Object.entries(TOKENS).flatMap(([name, token]) => ["--token", `${name}:${token}`]);
  const { url } = await serveCli(["serve", "--http", "127.0.0.1:0", "--config", config, ...tokens], { cwd: dir, env, started });
  host = new Client({ name: "host", version: "1.0.0" }, { capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } });
  await host.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKENS.alice}` } } }));
}, 60_000);
afterAll(async () => {
  await host?.close().catch(() => undefined);
  await stopAll(started);
  await rm(dir, { recursive: true, force: true });
});

interface AuditLine {
  principal: string;
  origin: string;
  server: string;
  tool: string;
  outcome: string;
  by?: string;
}
const auditLines = async (): Promise<AuditLine[]> =>
  (await readFile(join(home, "audit", "audit.jsonl"), "utf8").catch(() => ""))
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditLine);

describe("an app's calls through codemux's plugins and policies", () => {
  it("are audited with origin app, and counted and refused by the principal's calls per minute as any call", async () => {
    await until(async () => (await host.listTools()).tools.some((t) => t.name === "b__show_sales"));
    // The host shows b's app; the app calls its server's tool by the server's own name.
    await host.readResource({ uri: "ui://b/charts/sales.html" });
    const answered = await host.callTool({ name: "refresh_sales", arguments: { region: "north" } });
    expect(answered.structuredContent).toMatchObject({ region: "north", server: "b" });
    // The model's call of the tool that shows the app, by the name the host lists.
    expect((await host.callTool({ name: "b__show_sales", arguments: { region: "east" } })).structuredContent).toMatchObject({ server: "b" });
    // The third call in the minute: the app's too, refused by the policy.
    const refused = await host.callTool({ name: "refresh_sales", arguments: { region: "south" } });
    expect(refused.isError).toBe(true);
    await until(async () => (await auditLines()).length >= 4);
    const lines = (await auditLines()).map(({ principal, origin, server, tool, outcome, by }) => ({ principal, origin, server, tool, outcome, by }));
    const alice = { principal: "token:alice", server: "b" };
    expect(lines).toEqual([
      { ...alice, origin: "resources/read", tool: "resources/read", outcome: "ok", by: undefined },
      { ...alice, origin: "app", tool: "refresh_sales", outcome: "ok", by: undefined },
      { ...alice, origin: "call_tool", tool: "show_sales", outcome: "ok", by: undefined },
      { ...alice, origin: "app", tool: "refresh_sales", outcome: "refused", by: "policy" },
    ]);
  }, 60_000);
});
