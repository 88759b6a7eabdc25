import { Codemux, createSessionServer } from "@codemux/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPlugins, readPinFile, type ResultKeeper } from "@codemux/hooks";
import { config, misbehaving, recordingLogger, tempDir, textOf } from "./harness";

describe("loadPlugins wired into codemux as the CLI does", () => {
  it("runs the config's plugins on every call and records the catalog for pin", async () => {
    const dir = tempDir();
    const raw = {
      mcpServers: { s: misbehaving() },
      plugins: { audit: { file: "audit.jsonl" }, guard: { deny: ["s__crash"] }, pin: {}, summarize: { minChars: 100 } },
    };
    let core: Codemux | undefined;
    const results: ResultKeeper = { keep: (tool, text, owner) => core!.results.keep(tool, text, owner) };
    const plugins = await loadPlugins({ config: raw, configFile: join(dir, "codemux.json"), dataDir: dir, logger: recordingLogger(), results });
    core = new Codemux({ config: config(raw.mcpServers), middleware: [plugins.middleware] });
    core.on("toolsChanged", () => void plugins.toolsChanged(core!.catalog.entries()));
    core.start();
    await core.ready();
    await plugins.toolsChanged(core.catalog.entries());
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createSessionServer(core.sessions).connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);

    const refused = (await client.callTool({ name: "call_tool", arguments: { name: "s__crash", args: {} } })) as CallToolResult;
    expect(textOf(refused)).toContain("denied by the guard plugin");
    const ok = (await client.callTool({ name: "call_tool", arguments: { name: "s__echo", args: { text: "hi" } } })) as CallToolResult;
    expect(textOf(ok)).toBe("hi");

    await client.close();
    await core.close();
    await plugins.close();
    const lines = readFileSync(join(dir, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { tool: string; outcome: string; origin: string });
    expect(lines.map((l) => `${l.origin}:${l.tool}:${l.outcome}`)).toEqual(["call_tool:crash:refused", "call_tool:echo:ok"]);
    expect(Object.keys((await readPinFile(join(dir, "pins.json"))).tools)).toContain("s__structured");
  });
});
