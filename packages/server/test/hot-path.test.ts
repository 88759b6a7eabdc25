import type { ToolCallMiddleware } from "@codemux/core";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Codemux, type ToolPool } from "../src/index";
import { config, connect, misbehaving, servicesOf } from "./helpers";

const ECHO = {
  name: "echo",
  inputSchema: { type: "object" as const, properties: { text: { type: "string" } }, required: ["text"] },
  annotations: { readOnlyHint: true },
};

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

  it("still validates arguments and passes signal, progress, timeout, annotations and the session to the pool", async () => {
    const { core: c, calls } = core();
    const session = c.session();
    await expect(c.pipeline.call({ name: "m__echo", arguments: { text: 5 }, origin: "test", session })).rejects.toThrow(/text: must be string/);
    const signal = new AbortController().signal;
    const progress = () => undefined;
    await c.pipeline.call({ name: "m__echo", arguments: { text: "x" }, origin: "test", session, signal, progress, timeoutMs: 1234 });
    expect(calls.at(-1)).toEqual({
      tool: "echo",
      options: { annotations: { readOnlyHint: true }, session, signal, onprogress: progress, timeoutMs: 1234, inputRequired: {} },
    });
    await c.pipeline.call({ name: "m__echo", arguments: { text: "x" }, origin: "test", session });
    expect(calls.at(-1)).toEqual({ tool: "echo", options: { annotations: { readOnlyHint: true }, session, inputRequired: {} } });
  });
});

describe("a snippet's calls and their signals", () => {
  /** A core whose pool records the signal of each call; m__hang answers only when its signal aborts. */
  function recordingCore(middleware: ToolCallMiddleware[] = []): { core: Codemux; poolSignals: Array<AbortSignal | undefined> } {
    const poolSignals: Array<AbortSignal | undefined> = [];
    const pool = {
      names: ["m"],
      status: () => [{ name: "m", state: "ready" as const }],
      start: async () => undefined,
      callTool: async (...[, tool, args, options]: [string, string, Record<string, unknown>?, { signal?: AbortSignal }?]) => {
        const signal = options?.signal;
        poolSignals.push(signal);
        if (tool === "hang") await new Promise((resolve) => signal?.addEventListener("abort", resolve));
        return { content: [{ type: "text" as const, text: String(args?.text) }] };
      },
      on: () => undefined,
      off: () => undefined,
      close: async () => undefined,
    };
    const c = new Codemux({ config: config({}), pool: pool as unknown as ToolPool, middleware });
    c.catalog.setServerTools("m", [ECHO, { name: "hang", inputSchema: { type: "object" as const } }]);
    return { core: c, poolSignals };
  }

  it("share one signal downstream, aborted when the run ends; middleware still see each call's own signal", async () => {
    const seen: Array<AbortSignal | undefined> = [];
    const { core: c, poolSignals } = recordingCore([
      (ctx, next) => {
        seen.push(ctx.signal);
        return next(ctx);
      },
    ]);
    try {
      const code = `const calls = [1, 2, 3].map((i) => __host_call("m__echo", { text: String(i) }));\n__host_call("m__hang", {});\nexport default (await Promise.all(calls)).length;`;
      const run = await servicesOf(c).snippets.execute(code, { session: c.session() });
      expect(run).toMatchObject({ ok: true, result: 3 });
      expect(poolSignals).toHaveLength(4);
      expect(new Set(poolSignals).size).toBe(1);
      // The hung call was pending when the run ended: its downstream signal aborted, and with it the call's own.
      expect(poolSignals[0]?.aborted).toBe(true);
      expect(seen).toHaveLength(4);
      expect(new Set(seen).size).toBe(4);
      expect(seen.every((signal) => signal !== undefined && signal !== poolSignals[0])).toBe(true);
      expect(seen.filter((signal) => signal?.aborted)).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it("a middleware that passes on another signal or context has its signal reach the pool", async () => {
    const own = new AbortController();
    const { core: c, poolSignals } = recordingCore([
      (ctx, next) => (ctx.arguments.text === "1" ? next({ ...ctx, signal: own.signal }) : ctx.arguments.text === "2" ? next({ ...ctx }) : next(ctx)),
    ]);
    const seen: Array<AbortSignal | undefined> = [];
    c.pipeline.use((ctx, next) => {
      seen.push(ctx.signal);
      return next(ctx);
    });
    try {
      const code = `export default (await Promise.all([1, 2, 3].map((i) => __host_call("m__echo", { text: String(i) })))).length;`;
      expect(await servicesOf(c).snippets.execute(code, { session: c.session() })).toMatchObject({ ok: true, result: 3 });
      expect(poolSignals[0]).toBe(own.signal);
      // A copied context keeps the call's own signal, and the pool gets it.
      expect(poolSignals[1]).toBe(seen[1]);
      expect(poolSignals[2]).not.toBe(seen[2]);
    } finally {
      await c.close();
    }
  });
});

describe("a snippet's imports on the sandbox's fast path", () => {
  it("links the generated tool wrappers and bridge without esbuild", async () => {
    const kept = await mkdtemp(join(tmpdir(), "codemux-kept-"));
    // A test of the fast path itself: pinned on (CI's lanes-off run turns it off everywhere else).
    const h = await connect({ config: config({ m: misbehaving() }), keepBundlesDir: kept, sandbox: { fastPath: true } });
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
