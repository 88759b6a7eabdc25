import { composeMiddleware, silentLogger, type CallContext, type CatalogEntry, type ToolCallMiddleware, type ToolResult } from "@codemux/core";
import { describe, expect, it, vi } from "vitest";
import { PluginChain, SHORT_CIRCUIT_META } from "./chain";
import { PluginFailedError } from "./errors";
import type { Plugin } from "./types";

const entry = {
  qualifiedName: "s__echo",
  server: "s",
  name: "echo",
  functionName: "echo",
  moduleSpecifier: "mcp/servers/s/echo",
  signature: "echo({ text: string })",
  summary: "",
  tool: { name: "echo", inputSchema: { type: "object" } },
} satisfies CatalogEntry;

function context(args: Record<string, unknown>): CallContext {
  return {
    entry,
    annotations: {},
    arguments: args,
    origin: "call_tool",
    session: { id: "s1", principal: "local" },
    signal: undefined,
    progress: undefined,
    timeoutMs: undefined,
    job: undefined,
    requestId: undefined,
    state: new Map(),
  };
}

const text = (value: string): ToolResult => ({ content: [{ type: "text", text: value }] });
const textOf = (result: ToolResult) => (result.content[0] as { text: string }).text;

/** A pipeline as the server builds one: the plugins' middleware, then a later middleware, then the tool. */
function pipeline(plugins: Plugin[], log: string[]) {
  const chain = new PluginChain(plugins, { logger: silentLogger });
  const plugged: ToolCallMiddleware = (ctx, next) => chain.run(ctx, next);
  const later: ToolCallMiddleware = (ctx, next) => {
    log.push(`later:${String(ctx.arguments.text)}`);
    return next(ctx);
  };
  return composeMiddleware([plugged, later], async (ctx) => {
    log.push("tool");
    return text(String(ctx.arguments.text));
  });
}

describe("PluginChain compiles plugins to the pipeline's middleware model", () => {
  it("runs each plugin as a step of core's composeMiddleware: changed arguments reach the later middleware, after-hooks unwind in reverse", async () => {
    const log: string[] = [];
    const step = (name: string, priority: number): Plugin => ({
      name,
      priority,
      beforeCall: (call) => {
        log.push(`before:${name}`);
        return { action: "continue", arguments: { text: `${String(call.arguments.text)}+${name}` } };
      },
      afterCall: (_call, result) => {
        log.push(`after:${name}`);
        return text(`${textOf(result)}<${name}`);
      },
    });
    const run = pipeline([step("low", 1), step("high", 9)], log);
    const result = await run(context({ text: "x" }));
    expect(textOf(result)).toBe("x+high+low<low<high");
    expect(log).toEqual(["before:high", "before:low", "later:x+high+low", "tool", "after:low", "after:high"]);
  });

  it("a plugin that answers stops the chain there: neither the later middleware nor the tool runs, and outer after-hooks see the answer", async () => {
    const log: string[] = [];
    let seen: unknown;
    const outer: Plugin = { name: "outer", priority: 9, afterCall: (_call, result) => void (seen = result._meta) };
    const responder: Plugin = { name: "responder", priority: 5, beforeCall: () => ({ action: "respond", result: text("cached") }) };
    const result = await pipeline([outer, responder], log)(context({ text: "x" }));
    expect(textOf(result)).toBe("cached");
    expect(log).toEqual([]);
    expect(seen).toEqual({ [SHORT_CIRCUIT_META]: "responder" });
  });

  it("a fail-closed plugin whose before-hook throws stops the call, and the plugins that ran hear of it through onError, innermost first", async () => {
    const log: string[] = [];
    const outer: Plugin = {
      name: "outer",
      priority: 9,
      onError: (_call, error) => void log.push(`outer:${PluginFailedError.isInstance(error) ? "plugin failed" : "other"}`),
    };
    const broken: Plugin = {
      name: "broken",
      priority: 5,
      failClosed: true,
      beforeCall: () => {
        throw new Error("boom");
      },
      onError: () => void log.push("broken:onError"),
    };
    const inner: Plugin = { name: "inner", priority: 1, beforeCall: () => void log.push("inner:before") };
    await expect(pipeline([outer, broken, inner], log)(context({ text: "x" }))).rejects.toSatisfy((error) => PluginFailedError.isInstance(error));
    expect(log).toEqual(["broken:onError", "outer:plugin failed"]);
  });

  it("a plugin that is not fail-closed is skipped when its hook throws, and an onError answer turns a failure into a result", async () => {
    const log: string[] = [];
    const flaky: Plugin = {
      name: "flaky",
      beforeCall: () => {
        throw new Error("boom");
      },
    };
    expect(textOf(await pipeline([flaky], log)(context({ text: "x" })))).toBe("x");
    const rescue: Plugin = { name: "rescue", onError: () => text("rescued") };
    const chain = new PluginChain([rescue], { logger: silentLogger });
    const failing = composeMiddleware([(ctx, next) => chain.run(ctx, next)], async () => {
      throw new Error("down");
    });
    expect(textOf(await failing(context({})))).toBe("rescued");
  });

  it("a hook that answers at once is checked at once, with no timer; one that answers a promise still races its budget", async () => {
    const timers = vi.spyOn(globalThis, "setTimeout");
    try {
      const now: Plugin = { name: "now", beforeCall: () => ({ action: "continue", arguments: { text: "at once" } }), afterCall: () => undefined };
      expect(textOf(await pipeline([now], [])(context({ text: "x" })))).toBe("at once");
      expect(timers).not.toHaveBeenCalled();
      const later: Plugin = { name: "later", beforeCall: async () => ({ action: "continue", arguments: { text: "later" } }) };
      expect(textOf(await pipeline([later], [])(context({ text: "x" })))).toBe("later");
      expect(timers).toHaveBeenCalledTimes(1);
    } finally {
      timers.mockRestore();
    }
  });

  it("a plugin with only a beforeCall that answers at once hands the call on without an async step: one reaction around the tool's answer", async () => {
    const chain = new PluginChain(
      [
        { name: "pin", beforeCall: () => undefined },
        { name: "pin2", beforeCall: () => ({ action: "continue" }) },
      ],
      {
        logger: silentLogger,
      },
    );
    let settled = false;
    void chain
      .run(context({ text: "x" }), () => Promise.resolve(text("x")))
      .then(() => {
        settled = true;
      });
    // Microtask turns until the caller sees the answer: 2 here, 4 with async steps and an async run around them.
    let turns = 0;
    while (!settled && turns < 20) {
      await null;
      turns++;
    }
    expect(turns).toBe(2);
  });

  it("a hook whose answer throws when its then is read is a failed hook, not a failed call", async () => {
    const trap: Plugin = {
      name: "trap",
      beforeCall: () =>
        Object.defineProperty({}, "then", {
          get() {
            throw new Error("no then here");
          },
        }) as never,
    };
    expect(textOf(await pipeline([trap], [])(context({ text: "x" })))).toBe("x");
  });

  it("a call is named only when something reads its id, and keeps that name", async () => {
    const ids: string[] = [];
    const reader: Plugin = { name: "reader", beforeCall: (call) => void ids.push(call.id), afterCall: (call) => void ids.push(call.id) };
    await pipeline([reader], [])(context({ text: "x" }));
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).toBe(ids[0]);
  });

  it("keeps a call's view only while the call runs: dropped when it answers, fails, or its next step throws at once", async () => {
    const before: Plugin = { name: "before", beforeCall: () => undefined };
    const around: Plugin = { name: "around", beforeCall: () => undefined, afterCall: () => undefined };
    for (const plugins of [[before], [around], [before, around]]) {
      const chain = new PluginChain(plugins, { logger: silentLogger });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const running = chain.run(context({ text: "x" }), async (ctx) => {
        await gate;
        return text(String(ctx.arguments.text));
      });
      expect(chain.running).toBe(1);
      release();
      expect(textOf(await running)).toBe("x");
      expect(chain.running).toBe(0);
      await expect(chain.run(context({ text: "x" }), async () => Promise.reject(new Error("down")))).rejects.toThrow("down");
      expect(chain.running).toBe(0);
      const throwing = () => {
        throw new Error("at once");
      };
      await expect(chain.run(context({ text: "x" }), throwing)).rejects.toThrow("at once");
      expect(chain.running).toBe(0);
    }
  });

  it("a context run again while its first run is still going keeps the second run's view when the first ends", async () => {
    const around: Plugin = { name: "around", beforeCall: () => undefined, afterCall: () => undefined };
    const chain = new PluginChain([around], { logger: silentLogger });
    const ctx = context({ text: "x" });
    const gated = () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return { gate, release };
    };
    const one = gated();
    const two = gated();
    const first = chain.run(ctx, async () => {
      await one.gate;
      return text("first");
    });
    const second = chain.run(ctx, async () => {
      await two.gate;
      return text("second");
    });
    one.release();
    expect(textOf(await first)).toBe("first");
    expect(chain.running).toBe(1);
    two.release();
    expect(textOf(await second)).toBe("second");
    expect(chain.running).toBe(0);
  });
});
