import type { SessionInfo, ToolResult } from "@codemux/core";
import { Codemux } from "@codemux/server";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadPlugins, type LoadedPlugins, type Memory } from "@codemux/hooks";
import { config, misbehaving, recordingLogger, tempDir, textOf } from "./harness";

const alice: SessionInfo = { id: "alice-1", principal: "token:alice" };
const bob: SessionInfo = { id: "bob-1", principal: "token:bob" };
let open: Array<{ core: Codemux; plugins: LoadedPlugins }> = [];
afterEach(async () => {
  for (const { core, plugins } of open) {
    await core.close();
    await plugins.close();
  }
  open = [];
});

/** codemux as the CLI wires it, with the memory plugin from the config and its tool listed beside the meta-tools. */
async function start(dir: string, memory: Record<string, unknown> = {}) {
  const raw = { mcpServers: { s: misbehaving() }, plugins: { memory } };
  const plugins = await loadPlugins({ config: raw, configFile: join(dir, "codemux.json"), dataDir: dir, logger: recordingLogger() });
  const core = new Codemux({ config: config(raw.mcpServers), middleware: [plugins.middleware], metaTools: [...plugins.metaTools] });
  core.start();
  await core.ready();
  open.push({ core, plugins });
  const call = (session: SessionInfo, name: string, args: Record<string, unknown>) =>
    core.surface("code").callTool(name, args, { session, origin: "call_tool" });
  const echo = (session: SessionInfo, text: string) => call(session, "call_tool", { name: "s__echo", args: { text } });
  const recall = async (session: SessionInfo, query?: string) =>
    ((await call(session, "memory", { action: "recall", ...(query ? { query } : {}) })) as ToolResult).structuredContent?.memories as Memory[];
  return { core, plugins, call, echo, recall };
}

describe("the memory plugin", () => {
  it("remembers each principal's answers for that principal only, read on purpose and never put into results", async () => {
    const m = await start(tempDir());
    expect(textOf(await m.echo(alice, "alice's invoice 42"))).toBe("alice's invoice 42");
    expect(textOf(await m.echo(bob, "bob's payroll"))).toBe("bob's payroll");
    // A later answer is the tool's own: nothing remembered is added to it.
    expect(textOf(await m.echo(alice, "second"))).toBe("second");
    expect((await m.recall(alice)).map((x) => x.text)).toEqual(["second", "alice's invoice 42"]);
    expect((await m.recall(alice, "INVOICE 42")).map((x) => [x.tool, x.text])).toEqual([["s__echo", "alice's invoice 42"]]);
    expect((await m.recall(bob)).map((x) => x.text)).toEqual(["bob's payroll"]);
    expect(JSON.stringify(await m.recall(bob, "invoice"))).toBe("[]");
    // The tool is listed, and the instructions say nothing of what is remembered.
    expect((await m.core.surface("code").listTools(alice)).map((t) => t.name)).toContain("memory");
    expect(m.core.surface("code").instructions(alice)).not.toContain("invoice");
  });

  it("keeps memories across restarts, one file per principal named by a hash, and forgets one principal's only", async () => {
    const dir = tempDir();
    const first = await start(dir);
    await first.echo(alice, "kept across restarts");
    await first.echo(bob, "bob keeps this");
    await first.plugins.close();
    const files = readdirSync(join(dir, "memory"));
    expect(files).toHaveLength(2);
    expect(files.join(" ")).not.toMatch(/alice|bob/);
    const second = await start(dir);
    expect((await second.recall(alice)).map((x) => x.text)).toEqual(["kept across restarts"]);
    expect(await second.plugins.forget("token:alice")).toEqual({ memory: 1 });
    expect(await second.recall(alice)).toEqual([]);
    expect((await second.recall(bob)).map((x) => x.text)).toEqual(["bob keeps this"]);
    expect(textOf(await second.call(bob, "memory", { action: "forget" }))).toBe("Forgot 1 memories.");
    expect(await second.recall(bob)).toEqual([]);
  });

  it("keeps every answer of calls that end together (no update overwrites another's)", async () => {
    const m = await start(tempDir());
    await Promise.all(["a", "b", "c", "d", "e"].map((text) => m.echo(alice, text)));
    expect((await m.recall(alice)).map((x) => x.text).sort()).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("is bounded: entries per principal, characters per entry, and the tools it is told to remember", async () => {
    const dir = tempDir();
    const m = await start(dir, { maxEntries: 2, maxEntryChars: 100, tools: ["s__echo"] });
    await m.echo(alice, "one");
    await m.echo(alice, "two");
    await m.echo(alice, "x".repeat(500));
    await m.call(alice, "call_tool", { name: "s__counter", args: {} });
    const memories = await m.recall(alice);
    expect(memories.map((x) => x.text.slice(0, 5))).toEqual(["xxxxx", "two"]);
    expect(memories[0]?.text).toMatch(/^x{100}… \(400 more characters not kept\)$/);
    const file = readdirSync(join(dir, "memory"))[0] as string;
    expect(JSON.parse(readFileSync(join(dir, "memory", file), "utf8"))).toHaveLength(2);
  });
});
