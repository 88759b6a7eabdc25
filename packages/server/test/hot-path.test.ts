import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Codemux, type ToolPool } from "../src/index";
import { config, connect, misbehaving } from "./helpers";

const ECHO = { name: "echo", inputSchema: { type: "object" as const, properties: { text: { type: "string" } }, required: ["text"] }, annotations: { readOnlyHint: true } };

function core(): { core: Codemux; calls: Array<{ tool: string; options: unknown }> } {
  const calls: Array<{ tool: string; options: unknown }> = [];
  const pool = {
    names: ["m"],
    status: () => [{ name: "m", state: "ready" as const }],
    start: async () => undefined,
    callTool: async (...[, tool, args, options]: [string, string, Record<string, unknown>?, unknown?]) => {
      calls.push({ tool, options });
      return { content: [{ type: "text" as const, text: String(args?.text) }] };
    },
    on: () => undefined,
    off: () => undefined,
    close: async () => undefined,
  };
  const c = new Codemux({ config: config({}), pool: pool as unknown as ToolPool });
  c.catalog.setServerTools("m", [ECHO]);
  return { core: c, calls };
}

describe("the call pipeline's hot path", () => {
  it("resolves a listed tool with one lookup, without copying the server's tool list", async () => {
    const { core: c } = core();
    const entries = vi.spyOn(c.catalog, "entries");
    const session = c.session();
    const result = await c.pipeline.call({ name: "m__echo", arguments: { text: "hi" }, origin: "test", session });
    expect(result.content).toEqual([{ type: "text", text: "hi" }]);
    expect(entries).not.toHaveBeenCalled();
    // An unknown name still takes the full resolution, with its suggestions.
    await expect(c.pipeline.call({ name: "m__ecko", arguments: {}, origin: "test", session })).rejects.toThrow(/Did you mean "m__echo"/);
    await expect(c.pipeline.call({ name: `m__${"x".repeat(1000)}`, arguments: {}, origin: "test", session })).rejects.toThrow(/No tool has a name of/);
  });

  it("still validates arguments and passes signal, progress, timeout and annotations to the pool", async () => {
    const { core: c, calls } = core();
    const session = c.session();
    await expect(c.pipeline.call({ name: "m__echo", arguments: { text: 5 }, origin: "test", session })).rejects.toThrow(/text: must be string/);
    const signal = new AbortController().signal;
    const progress = () => undefined;
    await c.pipeline.call({ name: "m__echo", arguments: { text: "x" }, origin: "test", session, signal, progress, timeoutMs: 1234 });
    expect(calls.at(-1)).toEqual({ tool: "echo", options: { annotations: { readOnlyHint: true }, signal, onprogress: progress, timeoutMs: 1234 } });
    await c.pipeline.call({ name: "m__echo", arguments: { text: "x" }, origin: "test", session });
    expect(calls.at(-1)).toEqual({ tool: "echo", options: { annotations: { readOnlyHint: true } } });
  });
});

describe("a snippet's imports on the sandbox's fast path", () => {
  it("links the generated tool wrappers and bridge without esbuild", async () => {
    const kept = await mkdtemp(join(tmpdir(), "codemux-kept-"));
    const h = await connect({ config: config({ m: misbehaving() }), keepBundlesDir: kept });
    try {
      const text = await h.text("execute_code", { code: 'import { echo } from "mcp/servers/m/echo";\nexport default await echo({ text: "hi" });' });
      expect(JSON.parse(text)).toMatchObject({ result: "hi", toolCalls: 1 });
      const [run] = await readdir(kept);
      // The fast path keeps the stripped snippet and the modules QuickJS linked; esbuild's bundle has no such header.
      expect(await readFile(join(kept, run!, "bundle.mjs"), "utf8")).toContain("QuickJS links the modules below itself");
    } finally {
      await h.close();
      await rm(kept, { recursive: true, force: true });
    }
  });
});
