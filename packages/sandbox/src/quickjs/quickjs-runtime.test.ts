import { beforeAll, describe, expect, it } from "vitest";
import type { RuntimeHost, RuntimeOutcome, SandboxRuntime } from "../runtime.js";
import { createQuickJSRuntime, type WasmMemory, wipeMemory } from "./quickjs-runtime.js";

const MEMORY_LIMIT = 32 * 1024 * 1024;
let runtime: SandboxRuntime;
beforeAll(async () => {
  runtime = await createQuickJSRuntime({ memoryLimitBytes: MEMORY_LIMIT });
});

function host(overrides: Partial<RuntimeHost> = {}): RuntimeHost & { output: string[] } {
  const output: string[] = [];
  const controller = new AbortController();
  return {
    output,
    call: async (_name, json) => json,
    write: (_stream, text) => {
      output.push(text);
      return 1_000_000;
    },
    isAborted: () => controller.signal.aborted,
    signal: controller.signal,
    ...overrides,
  };
}

function run(code: string, options: { timeoutMs?: number; host?: RuntimeHost } = {}): Promise<RuntimeOutcome> {
  return runtime.run(
    {
      code,
      filename: "bundle.js",
      deadline: Date.now() + (options.timeoutMs ?? 2_000),
      limits: { memoryLimitBytes: MEMORY_LIMIT, maxResultBytes: 1024 * 1024 },
    },
    options.host ?? host(),
  );
}

// A leaked QuickJS object aborts the WASM instance at dispose and costs a worker, so every
// way a run can end must release everything: `retire` stays unset.
describe("QuickJS runtime: every ending releases the engine cleanly", () => {
  const endings: Array<[string, string, { timeoutMs?: number }, string | undefined]> = [
    ["a result", "export default [1, 'two'];", {}, undefined],
    ["a throw", "throw new Error('x');", {}, "runtime"],
    ["a rejected top-level await", "await Promise.reject(new TypeError('no'));", {}, "runtime"],
    ["an endless loop", "while (true) {}", { timeoutMs: 100 }, "timeout"],
    ["a deadline already past", "export default 1;", { timeoutMs: -1 }, "timeout"],
    ["a pending timer at the deadline", "await new Promise((r) => setTimeout(r, 60_000));", { timeoutMs: 100 }, "timeout"],
    ["a throwing timer", "setTimeout(() => { throw new Error('late'); }, 1);\nawait new Promise((r) => setTimeout(r, 50));", {}, "runtime"],
    ["a memory bomb", "const a: unknown[] = [];\nwhile (true) a.push(new Uint8Array(1 << 20));", {}, "memory"],
    ["deep recursion", "const f = (n: number): number => f(n + 1) + 1;\nf(0);", {}, "stack_overflow"],
    ["a non-serialisable result", "export default 1n;", {}, "result"],
  ];
  for (const [label, code, options, kind] of endings) {
    it(`ends on ${label}`, async () => {
      const outcome = await run(code.replace(/: (number|unknown\[\])/g, ""), options);
      expect(outcome.retire).toBeUndefined();
      if (kind === undefined) expect(outcome).toMatchObject({ ok: true, resultJson: '[1,"two"]' });
      else expect(outcome).toMatchObject({ ok: false, error: { kind } });
    });
  }

  it("ends on a host call still in flight at the deadline", async () => {
    const outcome = await run("await __host_call('slow', 1);", { timeoutMs: 100, host: host({ call: () => new Promise(() => undefined) }) });
    expect(outcome).toMatchObject({ ok: false, error: { kind: "timeout" } });
    expect(outcome.retire).toBeUndefined();
  });

  it("ends at the deadline when its timer fires before the clock reads the deadline", async () => {
    // A clock at half speed: every timer fires before the clock reaches the time the timer was set for.
    const start = Date.now();
    const now = () => start + (Date.now() - start) / 2;
    const slow = await createQuickJSRuntime({ memoryLimitBytes: MEMORY_LIMIT }, { now });
    const outcome = await slow.run(
      {
        code: "await new Promise((r) => setTimeout(r, 60_000));",
        filename: "bundle.js",
        deadline: now() + 100,
        limits: { memoryLimitBytes: MEMORY_LIMIT, maxResultBytes: 1024 * 1024 },
      },
      host(),
    );
    expect(outcome).toMatchObject({ ok: false, error: { kind: "timeout" } });
    expect(outcome.retire).toBeUndefined();
  }, 10_000);

  it("ends on cancellation while the guest spins", async () => {
    // In a worker the main thread flips a shared flag; here the guest holds the only thread, so time stands in for it.
    const cancelAt = Date.now() + 50;
    const outcome = await run("while (true) {}", { timeoutMs: 5_000, host: host({ isAborted: () => Date.now() > cancelAt }) });
    expect(outcome).toMatchObject({ ok: false, error: { kind: "aborted" } });
    expect(outcome.retire).toBeUndefined();
  });

  it("hands host call answers back as parsed JSON", async () => {
    const outcome = await run("export default await __host_call('echo', { a: [1, 2] });");
    expect(outcome).toMatchObject({ ok: true, resultJson: '{"a":[1,2]}' });
  });
});

describe("QuickJS runtime: modules it links itself", () => {
  const sources = { "mcp/a.ts": "export const a = 20;", "mcp/b.ts": 'import { a } from "./a.ts";\nexport const b = a + 1;' };
  const links = { "snippet.ts\nmcp/b.ts": "mcp/b.ts", "mcp/b.ts\n./a.ts": "mcp/a.ts", "snippet.ts\nmcp/a.ts": "mcp/a.ts" };
  const linked = (code: string) =>
    runtime.run(
      {
        code,
        filename: "snippet.ts",
        deadline: Date.now() + 2_000,
        limits: { memoryLimitBytes: MEMORY_LIMIT, maxResultBytes: 1024 * 1024 },
        modules: { entry: "snippet.ts", sources, links },
      },
      host(),
    );

  it("links the snippet's imports through the links table and awaits its default export", async () => {
    expect(await linked('import { b } from "mcp/b.ts";\nexport default await Promise.resolve(b * 2);')).toEqual({ ok: true, resultJson: "42" });
  });

  it("says a failure out of evalCode may be run again (nothing left the guest), unless the guest wrote output", async () => {
    expect(await linked("let a = 1;\nlet a = 2;")).toMatchObject({ ok: false, unlinked: true });
    expect(await linked('import { nope } from "mcp/a.ts";\nexport default nope;')).toMatchObject({ ok: false, unlinked: true });
    expect(await linked('import { a } from "mcp/unlisted.ts";')).toMatchObject({ ok: false, unlinked: true });
    expect(await linked('import { b } from "mcp/b.ts";\n__host_call("x", 1);\nthrow new Error("before any call left");')).toMatchObject({
      ok: false,
      unlinked: true,
    });
    const seen = await linked('import { b } from "mcp/b.ts";\nconsole.log(b);\nthrow new Error("after output");');
    expect(seen).toMatchObject({ ok: false, error: { message: "after output" } });
    expect(seen.unlinked).toBeUndefined();
    const later = await linked("await null;\nthrow new Error('after a yield');");
    expect(later.unlinked).toBeUndefined();
  });

  it("serves no module to import() once linking is over, even one the links table names", async () => {
    const outcome = await linked('import { a } from "mcp/a.ts";\nexport default await import("mcp/a.ts").then(() => "loaded", (e) => e.message);');
    expect(outcome).toEqual({ ok: true, resultJson: JSON.stringify("import() is not available in the sandbox") });
  });
});

describe("QuickJS runtime: the call bridge", () => {
  it("sends the calls made before the guest yields together, once it yields", async () => {
    const events: string[] = [];
    const recording = host({
      call: async (name) => {
        events.push(`call ${name}`);
        return undefined;
      },
      write: (_stream, text) => {
        events.push(`write ${JSON.parse(JSON.stringify(text)).trim()}`);
        return 1_000_000;
      },
    });
    const code = "const a = __host_call('a', 1);\nconst b = __host_call('b', 2);\nconsole.log('yielding');\nawait Promise.all([a, b]);\nconsole.log('done');";
    expect(await run(code, { host: recording })).toMatchObject({ ok: true });
    expect(events).toEqual(["write yielding", "call a", "call b", "write done"]);
  });

  it("hands answers that arrive together to the guest in one crossing, each to its own call", async () => {
    let answered = 0;
    const counting = host({
      call: async (_name, json) => {
        answered++;
        return json === undefined ? undefined : JSON.stringify({ echoed: JSON.parse(json) as unknown });
      },
    });
    const code = [
      "const all = await Promise.all(Array.from({ length: 300 }, (_, i) => __host_call('echo', i % 3 === 0 ? undefined : { i })));",
      "export default all.map((a) => (a === undefined ? -1 : a.echoed.i));",
    ].join("\n");
    const outcome = await run(code, { host: counting });
    expect(answered).toBe(300);
    expect(outcome.ok && (JSON.parse(outcome.resultJson as string) as number[]).slice(0, 6)).toEqual([-1, 1, 2, -1, 4, 5]);
  });

  it("rejects a failed call with the host's message and the calling line's stack", async () => {
    const failing = host({ call: async () => Promise.reject(new Error("down \u0000 and out")) });
    const outcome = await run("\n\nawait __host_call('x', 1);", { host: failing });
    expect(outcome).toMatchObject({ ok: false, error: { message: "down \u0000 and out" } });
    expect(!outcome.ok && outcome.error.stack).toContain("bundle.js:3:");
  });

  it("allows exactly the limit of calls in flight and refuses the next in the guest", async () => {
    const code = [
      "const calls = Array.from({ length: 1000 }, (_, i) => __host_call('echo', i));",
      "const refused = await __host_call('echo', 1000).then(() => 'taken', (error) => error.message);",
      "export default [(await Promise.all(calls)).length, refused];",
    ].join("\n");
    const outcome = await run(code);
    expect(outcome.ok && JSON.parse(outcome.resultJson as string)).toEqual([1000, expect.stringContaining("Too many host calls in flight")]);
  });

  it("ends the run when the guest's own then-getter throws while an answer is handed over", async () => {
    const code = "Object.defineProperty(Object.prototype, 'then', { get() { throw new Error('hostile then'); } });\nawait __host_call('echo', { a: 1 });";
    expect(await run(code)).toMatchObject({ ok: false, error: { kind: "runtime", message: "hostile then" } });
  });
});

describe("QuickJS runtime: the console and timers, compiled on first use", () => {
  it("behave as if installed before the guest ran, even after it replaced the built-ins they use", async () => {
    const io = host();
    const code = [
      "const names = [setTimeout, setInterval, queueMicrotask, console.log].map((f) => f.name);",
      'JSON.stringify = () => "\\"hijacked\\"";',
      "Reflect.apply = () => { throw new Error('hijacked apply'); };",
      "console.log('hello', { a: 1 });",
      "let ticks = 0;",
      "queueMicrotask(() => { ticks++; });",
      "await new Promise((resolve) => setTimeout(resolve, 1));",
      "export default { names, ticks, kind: typeof Object.getOwnPropertyDescriptor(globalThis, 'console').value };",
    ].join("\n");
    const outcome = await run(code, { host: io });
    expect(outcome).toMatchObject({ ok: true });
    expect(JSON.parse((outcome as { resultJson: string }).resultJson)).toEqual({ names: ["", "", "", ""], ticks: 1, kind: "object" });
    expect(io.output).toEqual(["hello { a: 1 }\n"]);
  });
});

describe("QuickJS runtime: each engine's memory holds nothing of an earlier run", () => {
  const find = (memory: WasmMemory, needle: string) => Buffer.from(memory.buffer).indexOf(Buffer.from(needle, "latin1"));
  const firstNonZero = (memory: WasmMemory) => new Uint8Array(memory.buffer).findIndex((byte) => byte !== 0);

  it("wipes a used memory to all zero bytes, and refuses one that grew", () => {
    const Memory = (
      globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => WasmMemory & { grow(pages: number): number } } }
    ).WebAssembly.Memory;
    const memory = new Memory({ initial: 256, maximum: 512 });
    new Uint8Array(memory.buffer).fill(0xa5, 1000, 5_000_000);
    expect(wipeMemory(memory)).toBe(true);
    expect(firstNonZero(memory)).toBe(-1);
    memory.grow(1);
    new Uint8Array(memory.buffer).fill(0xa5, 0, 10);
    expect(wipeMemory(memory)).toBe(false);
  });

  it("builds the next engine on the last run's memory only after zeroing all of it", async () => {
    const seen: Array<{ memory: WasmMemory; reused: boolean; nonZero: number }> = [];
    const own = await createQuickJSRuntime(
      { memoryLimitBytes: MEMORY_LIMIT },
      { beforeInstantiate: (memory, reused) => seen.push({ memory, reused, nonZero: firstNonZero(memory) }) },
    );
    const secret = `SECRET-${process.pid}-${Date.now()}`;
    const request = (code: string) => ({
      code,
      filename: "bundle.js",
      deadline: Date.now() + 5_000,
      limits: { memoryLimitBytes: MEMORY_LIMIT, maxResultBytes: 1024 * 1024 },
    });
    const first = await own.run(
      request(`const parts = [];\nfor (let i = 0; i < 50; i++) parts.push(${JSON.stringify(secret)}.repeat(100) + i);\nexport default parts.length;`),
      host(),
    );
    expect(first).toMatchObject({ ok: true, resultJson: "50" });
    const firstMemory = seen[0]?.memory as WasmMemory;
    // The guest's strings are in its memory while it is held; the wipe is what removes them.
    expect(find(firstMemory, secret)).toBeGreaterThanOrEqual(0);
    await own.ready?.();
    expect(seen[1]).toMatchObject({ memory: firstMemory, reused: true, nonZero: -1 });
    const second = await own.run(request("export default 1;"), host());
    expect(second).toMatchObject({ ok: true, resultJson: "1" });
    expect(find(firstMemory, secret)).toBe(-1);
  });
});

describe("QuickJS runtime: preloaded modules", () => {
  const BOX = "export const box = { n: 0 };\nexport function fail() {\n  throw new RangeError('from box');\n}\n";
  const request = (code: string, sources: Record<string, string>) => ({
    code,
    filename: "snippet.ts",
    modules: { entry: "snippet.ts", sources, links: Object.fromEntries(Object.keys(sources).map((name) => [`snippet.ts\n${name}`, name])) },
    deadline: Date.now() + 5_000,
    limits: { memoryLimitBytes: MEMORY_LIMIT, maxResultBytes: 1024 * 1024 },
  });
  const USE_BOX = 'import { box } from "mcp/box";\nbox.n++;\nexport default box.n;';

  it("links a run's import to the module built before the run, evaluated afresh in each engine", async () => {
    const loaded: string[] = [];
    const own = await createQuickJSRuntime({ memoryLimitBytes: MEMORY_LIMIT, preload: { "mcp/box": BOX } }, { onLoad: (name) => loaded.push(name) });
    for (let i = 0; i < 3; i++) {
      await own.ready?.();
      // The state a run leaves in the module is gone in the next engine.
      expect(await own.run(request(USE_BOX, { "mcp/box": BOX }), host())).toMatchObject({ ok: true, resultJson: "1" });
    }
    expect(loaded).toEqual([]);
  });

  it("keeps the frames of an error thrown in a preloaded module named after it", async () => {
    const own = await createQuickJSRuntime({ memoryLimitBytes: MEMORY_LIMIT, preload: { "mcp/box": BOX } });
    const outcome = await own.run(request('import { fail } from "mcp/box";\nfail();', { "mcp/box": BOX }), host());
    expect(outcome).toMatchObject({ ok: false, error: { kind: "runtime", message: "from box" } });
    expect(outcome.ok ? "" : outcome.error.stack).toMatch(/at fail \(mcp\/box:3:\d+\)/);
  });

  it("gives a run that brings another source for a preloaded path an engine with that source", async () => {
    const loaded: string[] = [];
    const own = await createQuickJSRuntime({ memoryLimitBytes: MEMORY_LIMIT, preload: { "mcp/box": BOX } }, { onLoad: (name) => loaded.push(name) });
    const other = "export const box = { n: 41 };";
    expect(await own.run(request(USE_BOX, { "mcp/box": other }), host())).toMatchObject({ ok: true, resultJson: "42" });
    expect(loaded).toEqual(["mcp/box"]);
    await own.ready?.();
    expect(await own.run(request(USE_BOX, { "mcp/box": BOX }), host())).toMatchObject({ ok: true, resultJson: "1" });
    expect(loaded).toEqual(["mcp/box"]);
  });

  const failing: Array<[string, string]> = [
    ["throws", "throw new Error('no');\nexport const box = { n: 0 };"],
    ["awaits at the top level", "await 0;\nexport const box = { n: 0 };"],
    ["writes to the console", "console.log('early');\nexport const box = { n: 0 };"],
    ["imports a module", 'import "mcp/other";\nexport const box = { n: 0 };'],
    ["never ends", "while (true) {}\nexport const box = { n: 0 };"],
  ];
  for (const [label, source] of failing) {
    it(`drops a preloaded module that ${label}, and links the run's own`, async () => {
      const loaded: string[] = [];
      const own = await createQuickJSRuntime({ memoryLimitBytes: MEMORY_LIMIT, preload: { "mcp/box": source } }, { onLoad: (name) => loaded.push(name) });
      const out = host();
      expect(await own.run(request(USE_BOX, { "mcp/box": BOX }), out)).toMatchObject({ ok: true, resultJson: "1" });
      expect(out.output).toEqual([]);
      await own.ready?.();
      expect(await own.run(request(USE_BOX, { "mcp/box": BOX }), host())).toMatchObject({ ok: true, resultJson: "1" });
      expect(loaded).toEqual(["mcp/box", "mcp/box"]);
    }, 10_000);
  }
});
