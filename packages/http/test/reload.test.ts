import { loadConfigFile } from "@codemux/pool";
import { Codemux } from "@codemux/server";
import { misbehavingEntry, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CodemuxHttpServer, watchConfig, type LogRecord } from "../src/index";
import { TOKENS, bearer } from "./helpers";

const server = misbehavingEntry;
const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

describe("hot reload while clients are connected", () => {
  it("adds, edits and removes servers from the watched file; unchanged ones keep their connection; a bad edit keeps the last good config", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-reload-"));
    const file = join(dir, "codemux.json");
    const write = (servers: Record<string, unknown>) => writeFile(file, JSON.stringify({ mcpServers: servers }));
    await write({ a: server("a") });
    const core = new Codemux({ config: await loadConfigFile(file), mode: "passthrough", poolOptions: { backoff: { initialMs: 50, maxMs: 200 } } });
    core.start();
    await core.ready();
    const logs: LogRecord[] = [];
    const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "alice", token: TOKENS.alice }], log: (r) => logs.push(r) });
    await http.listen();
    const watcher = watchConfig({ file, core, log: (r) => logs.push(r), debounceMs: 100 });
    const client = new Client({ name: "t", version: "1" });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
    const names = async () => (await client.listTools()).tools.map((t) => t.name);
    const pidOf = async (tool: string) => (JSON.parse(textOf(await client.callTool({ name: tool, arguments: {} }))) as { pid: number }).pid;
    try {
      const pidA = await pidOf("a__counter");

      await write({ a: server("a"), b: server("b") });
      // The list_changed notification comes on the client's SSE stream, and may land after a tools/list already shows b.
      await until(async () => changed > 0 && (await names()).includes("b__echo"));
      expect(await pidOf("a__counter")).toBe(pidA);

      await writeFile(file, '{ "mcpServers": { "a": { "command": 42 } } }');
      await until(() => logs.some((l) => l.msg === "config not reloaded; the last good config keeps serving"));
      expect(await names()).toEqual(expect.arrayContaining(["a__echo", "b__echo"]));

      const pidB = await pidOf("b__counter");
      await write({ a: server("a"), b: server("b", { env: { EDITED: "1" } }) });
      await until(async () => (await pidOf("b__counter").catch(() => pidB)) !== pidB);
      expect(await pidOf("a__counter")).toBe(pidA);

      await write({ b: server("b", { env: { EDITED: "1" } }) });
      await until(async () => !(await names()).some((n) => n.startsWith("a__")));
      expect(logs.filter((l) => l.msg === "config reloaded").length).toBeGreaterThanOrEqual(3);
    } finally {
      watcher.close();
      await client.close();
      await http.close();
      await core.close();
    }
  });
});
