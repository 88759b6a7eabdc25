import { afterEach, describe, expect, it } from "vitest";
import { SHORT_CIRCUIT_META, type Plugin } from "@codemux/hooks";
import { connect, misbehaving, textOf, tracer, type Harness } from "./harness";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const calls = async (h: Harness) => JSON.parse(textOf(await h.call("s__counter"))).calls as number;

describe("the plugin chain around every call", () => {
  it("runs before-hooks highest priority first and after-hooks in reverse, equal priorities in given order", async () => {
    const log: string[] = [];
    harness = await connect({
      servers: { s: misbehaving() },
      plugins: [tracer("p10", 10, log), tracer("p100", 100, log), tracer("p50", 50, log), tracer("q50", 50, log)],
    });
    expect(textOf(await harness.call("s__echo", { text: "hi" }))).toBe("hi");
    expect(log).toEqual(["before:p100", "before:p50", "before:q50", "before:p10", "after:p10", "after:q50", "after:p50", "after:p100"]);
  });

  it("passes changed arguments on to the tool, and they are still validated against its schema", async () => {
    const rewrite: Plugin = {
      name: "rewrite",
      beforeCall: (call) => ({ action: "continue", arguments: { ...call.arguments, text: `${String(call.arguments.text)}!` } }),
    };
    harness = await connect({ servers: { s: misbehaving() }, plugins: [rewrite] });
    expect(textOf(await harness.call("s__echo", { text: "hi" }))).toBe("hi!");

    const breaker: Plugin = { name: "breaker", beforeCall: () => ({ action: "continue", arguments: { text: 42 } }) };
    await harness.close();
    harness = await connect({ servers: { s: misbehaving() }, plugins: [breaker] });
    const result = await harness.call("s__echo", { text: "hi" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Invalid arguments for s__echo.*text/);
  });

  it("answers without calling the tool on respond, and the after-hooks of plugins that ran still see the answer", async () => {
    const log: string[] = [];
    let seen: unknown;
    const outer: Plugin = { name: "outer", priority: 200, afterCall: (_call, result) => void (seen = result._meta) };
    const responder: Plugin = {
      name: "responder",
      priority: 100,
      beforeCall: (call) =>
        call.tool === "counter" && call.state.size === 0 && call.arguments.fake
          ? { action: "respond", result: { content: [{ type: "text", text: "from the plugin" }] } }
          : undefined,
    };
    harness = await connect({ servers: { s: misbehaving() }, plugins: [outer, responder, tracer("inner", 10, log)] });
    const before = await calls(harness);
    log.length = 0;
    const answer = await harness.client.callTool({ name: "s__counter", arguments: { fake: true } });
    expect(textOf(answer as never)).toBe("from the plugin");
    expect(seen).toEqual({ [SHORT_CIRCUIT_META]: "responder" });
    expect(log).toEqual([]);
    expect(await calls(harness)).toBe(before + 1);
  });

  it("refuses on abort: the tool is not called and the model reads why", async () => {
    const refuse: Plugin = {
      name: "policy",
      beforeCall: (call) => (call.tool === "echo" ? { action: "abort", error: "echo is not allowed here" } : undefined),
    };
    harness = await connect({ servers: { s: misbehaving() }, plugins: [refuse] });
    const before = await calls(harness);
    const result = await harness.call("s__echo", { text: "hi" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("echo is not allowed here");
    expect(await calls(harness)).toBe(before + 1);
  });

  it("lets onError answer for a call that threw", async () => {
    const fallback: Plugin = { name: "fallback", onError: (call) => ({ content: [{ type: "text", text: `fallback for ${call.tool}` }] }) };
    harness = await connect({ servers: { s: misbehaving() }, plugins: [fallback] });
    expect(textOf(await harness.call("s__throw", { message: "boom" }))).toBe("fallback for throw");
  });

  it("keeps structuredContent and _meta of a result through plugins that change nothing", async () => {
    const noop: Plugin = { name: "noop", beforeCall: () => ({ action: "continue" }), afterCall: () => undefined };
    harness = await connect({ servers: { s: misbehaving() }, plugins: [noop, { ...noop, name: "noop2" }] });
    const result = await harness.call("s__structured", { n: 4 });
    expect(result.structuredContent).toEqual({ n: 4, doubled: 8 });
  });

  it("runs for the calls inside execute_code too, with their origin", async () => {
    const origins: string[] = [];
    const watch: Plugin = { name: "watch", beforeCall: (call) => void origins.push(`${call.origin}:${call.name}`) };
    harness = await connect({ servers: { s: misbehaving() }, plugins: [watch], core: { mode: "code" } });
    const code = `import { echo } from "mcp/servers/s/echo";\nexport default (await Promise.all([1, 2, 3].map((n) => echo({ text: String(n) })))).join(",");`;
    const result = await harness.call("execute_code", { code });
    expect(textOf(result)).toContain('"result":"1,2,3"');
    await harness.call("call_tool", { name: "s__echo", args: { text: "x" } });
    expect(origins.sort()).toEqual(["call_tool:s__echo", "execute_code:s__echo", "execute_code:s__echo", "execute_code:s__echo"]);
  });
});

describe("a plugin that fails", () => {
  const throwing = (failClosed: boolean): Plugin => ({
    name: "thrower",
    failClosed,
    beforeCall: (call) => {
      if (call.tool === "echo") throw new Error("bug in before");
    },
    afterCall: (call) => {
      if (call.tool === "echo") throw new Error("bug in after");
    },
  });
  const hanging = (failClosed: boolean): Plugin => ({
    name: "hanger",
    failClosed,
    timeoutMs: 50,
    beforeCall: (call) => (call.tool === "echo" ? new Promise(() => undefined) : undefined),
  });
  const slow = (failClosed: boolean): Plugin => ({
    name: "slowpoke",
    failClosed,
    timeoutMs: 50,
    beforeCall: (call) =>
      call.tool === "echo"
        ? new Promise((resolve) => setTimeout(() => resolve({ action: "continue", arguments: { text: "changed too late" } }), 400))
        : undefined,
  });
  const nonsense = (failClosed: boolean): Plugin => ({
    name: "nonsense",
    failClosed,
    afterCall: (call) => (call.tool === "echo" ? ("not a result" as never) : undefined),
  });

  it.each([
    ["throws", throwing, "thrower"],
    ["never answers", hanging, "hanger"],
    ["is slower than its budget", slow, "slowpoke"],
    ["answers nonsense", nonsense, "nonsense"],
  ])("that %s is isolated by default: the call goes on unchanged and the log names it", async (_what, make, name) => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [make(false)] });
    const result = await harness.call("s__echo", { text: "hi" });
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([{ type: "text", text: "hi" }]);
    expect(harness.logger.lines.join("\n")).toContain(`plugin "${name}"`);
  });

  it.each([
    ["throws", throwing, "thrower"],
    ["never answers", hanging, "hanger"],
    ["is slower than its budget", slow, "slowpoke"],
  ])("that %s and is fail-closed stops the call before the tool runs", async (_what, make, name) => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [make(true)] });
    const before = await calls(harness);
    const result = await harness.call("s__echo", { text: "hi" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`Plugin "${name}" failed .*the call was not made`));
    expect(await calls(harness)).toBe(before + 1);
  });

  it("that is fail-closed and fails after the call withholds the result", async () => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [nonsense(true)] });
    const result = await harness.call("s__echo", { text: "hi" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Plugin "nonsense" failed after the call .*withheld/);
  });

  it("a slow plugin within its budget just delays the call", async () => {
    const patient: Plugin = { name: "patient", failClosed: true, beforeCall: () => new Promise((resolve) => setTimeout(() => resolve(undefined), 100)) };
    harness = await connect({ servers: { s: misbehaving() }, plugins: [patient] });
    expect((await harness.call("s__echo", { text: "hi" })).content).toEqual([{ type: "text", text: "hi" }]);
  });
});
