import { misbehavingEntry, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./run-cli";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-watch-stdio-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const server = misbehavingEntry;
const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

describe("serve over stdio with a config file", () => {
  it("applies edits of the file while a client is connected: servers added, changed and removed, list_changed sent, a bad edit refused", async () => {
    const file = join(dir, "codemux.json");
    const write = (servers: Record<string, unknown>) => writeFile(file, JSON.stringify({ mcpServers: servers }));
    await write({ a: server("a") });
    const env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux") };
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, "--config", file, "--mode", "passthrough"],
      cwd: dir,
      env,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d));
    const client = new Client({ name: "watch-test", version: "1.0.0" });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.connect(transport);
    const names = async () => (await client.listTools()).tools.map((t) => t.name);
    const pidOf = async (tool: string) => (JSON.parse(textOf(await client.callTool({ name: tool, arguments: {} }))) as { pid: number }).pid;
    try {
      await until(async () => (await names()).includes("a__counter"));
      await until(() => stderr.includes(`watching ${file}`));
      const pidA = await pidOf("a__counter");

      await write({ a: server("a"), b: server("b") });
      await until(async () => (await names()).includes("b__echo"));
      await until(() => changed > 0);
      expect(await pidOf("a__counter")).toBe(pidA);

      const pidB = await pidOf("b__counter");
      await write({ a: server("a"), b: server("b", { env: { EDITED: "1" } }) });
      await until(async () => (await pidOf("b__counter").catch(() => pidB)) !== pidB);
      expect(await pidOf("a__counter")).toBe(pidA);

      await writeFile(file, '{ "mcpServers": { "a": { "command": 42 } } }');
      await until(() => stderr.includes("config not reloaded; the last good config keeps serving"));
      expect(await names()).toEqual(expect.arrayContaining(["a__echo", "b__echo"]));

      const before = changed;
      await write({ b: server("b", { env: { EDITED: "1" } }) });
      await until(async () => !(await names()).some((n) => n.startsWith("a__")));
      await until(() => changed > before);
      expect(stderr).toMatch(/config reloaded \(file: .*codemux\.json; removed: a\)/);
    } finally {
      await client.close();
    }
  });
});
