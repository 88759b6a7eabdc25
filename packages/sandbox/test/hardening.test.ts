import { type CodeExecutor, type ExecuteRequest, type ExecuteResult, HOST_CALL_GLOBAL, Sandbox } from "@codemux/sandbox";
import { afterAll, describe, expect, it } from "vitest";

// Hostile tests for issue 9 (hardening): each names the class it closes and fails without its fix.

/** One worker, so every run lands where the run before it ran. */
const sandbox = new Sandbox({ workers: 1 });
afterAll(() => sandbox.close());

const run = (code: string, request: Partial<ExecuteRequest> = {}): Promise<ExecuteResult> => sandbox.execute({ code, timeoutMs: 10_000, ...request });

describe("class 1: guest text is cut before the host reads it, and read in linear time", () => {
  it("maps a huge thrown stack of `file:1:` repeats without stalling (a regex here took minutes)", async () => {
    for (const unit of ["a:1:", "bundle.js:1:", "(bundle.js:1:1"]) {
      const result = await run(
        `const e = new Error("boom");\nObject.defineProperty(e, "stack", { value: ${JSON.stringify(unit)}.repeat(200_000) });\nthrow e;`,
      );
      expect(result.error).toMatchObject({ kind: "runtime" });
      expect(result.error?.message).toContain("Error: boom");
      expect(result.error?.stack?.length ?? 0).toBeLessThan(20_000);
    }
  }, 20_000);

  it("cuts a ten-megabyte error message", async () => {
    const result = await run("throw new Error('x'.repeat(10_000_000));");
    expect(result.error).toMatchObject({ kind: "runtime" });
    expect(result.error?.message.length).toBeLessThan(5_000);
    expect(result.error?.message).toContain("more characters");
  });

  it("checks imports without a regex that is quadratic on lines starting with `import` (a template of 50,000 took minutes)", async () => {
    const code = `const text = \`${"import x\n".repeat(50_000)}\`;\nimport fs from "node:fs";\nexport default text.length;`;
    const result = await run(code);
    expect(result.error).toMatchObject({ kind: "import", line: 50_002 });
    expect(result.error?.message).toContain('Cannot import "node:fs"');
  }, 20_000);
});

describe("class 3: no shared or resizable memory, and nothing of an earlier run in memory", () => {
  it("removes SharedArrayBuffer, Atomics, WeakRef, FinalizationRegistry and buffer resizing", async () => {
    const result = await run(
      "export default [typeof SharedArrayBuffer, typeof Atomics, typeof WeakRef, typeof FinalizationRegistry, typeof (ArrayBuffer.prototype as any).resize, typeof (ArrayBuffer.prototype as any).transfer];",
    );
    expect(result).toMatchObject({ ok: true, result: ["undefined", "undefined", "undefined", "undefined", "undefined", "undefined"] });
  });

  it("a later run scanning all the memory it can reach does not find an earlier run's secret", async () => {
    const secret = `SECRET-${process.pid}-${Date.now()}`;
    const first = await run(
      `const parts: string[] = [];\nfor (let i = 0; i < 200; i++) parts.push(${JSON.stringify(secret)}.repeat(500) + i);\nexport default parts.length;`,
    );
    expect(first).toMatchObject({ ok: true, result: 200 });
    // A growable SharedArrayBuffer read past its own memory in this engine: the way an earlier run's data leaked.
    const scan = `
      const needle = ${JSON.stringify(secret)};
      const views: Uint8Array[] = [];
      const G = (globalThis as any).SharedArrayBuffer;
      if (typeof G === "function") { const shared = new G(16, { maxByteLength: 48 << 20 }); shared.grow(32 << 20); views.push(new Uint8Array(shared)); }
      for (let i = 0; i < 8; i++) views.push(new Uint8Array(2 << 20));
      let found = false;
      for (const bytes of views) {
        outer: for (let i = 0; i + needle.length < bytes.length; i++) {
          if (bytes[i] !== 83) continue;
          for (let j = 1; j < needle.length; j++) if (bytes[i + j] !== needle.charCodeAt(j)) continue outer;
          found = true;
          break;
        }
      }
      export default found;`;
    const second = await run(scan, { timeoutMs: 30_000 });
    expect(second).toMatchObject({ ok: true, result: false });
  }, 40_000);
});

describe("class 4: bytes in flight are bounded per run and per sandbox", () => {
  it("fails a run whose pending answers pass its budget, with kind budget, and keeps serving", async () => {
    const small = new Sandbox({ workers: 1, maxRunPendingBytes: 1024 * 1024 });
    try {
      const big = "y".repeat(200_000);
      // Twenty answers of 200 KB awaited together: 4 MB held for one run at once.
      const code = `const all = await Promise.all(Array.from({ length: 20 }, (_, i) => __host_call("big", i)));\nexport default all.length;`;
      const result = await small.execute({ code, onCall: async () => big, timeoutMs: 10_000 });
      expect(result.error).toMatchObject({ kind: "budget" });
      expect(result.error?.message).toContain("1 MiB");
      expect(await small.execute({ code: "export default 1" })).toMatchObject({ ok: true, result: 1 });
    } finally {
      await small.close();
    }
  });

  it("fails the run that pushes the whole sandbox past its budget", async () => {
    const shared = new Sandbox({ workers: 2, maxTotalPendingBytes: 1024 * 1024 });
    try {
      const big = "z".repeat(300_000);
      // Each run holds 600 KB (two answers it has not yet acknowledged) while the other does the same.
      const code = `await Promise.all([__host_call("big", 1), __host_call("big", 2)]);\nawait new Promise((resolve) => setTimeout(resolve, 1500));\nexport default "done";`;
      const runs = await Promise.all([0, 1].map(() => shared.execute({ code, onCall: async () => big, timeoutMs: 10_000 })));
      const kinds = runs.map((r) => r.error?.kind ?? "ok");
      expect(kinds).toContain("budget");
      expect(runs.find((r) => r.error?.kind === "budget")?.error?.message).toContain("all runs");
    } finally {
      await shared.close();
    }
  });

  it("refuses a snippet over the code size limit before bundling it", async () => {
    const code = `${"const a = 1;\n".repeat(90_000)}export default 1;`;
    expect(code.length).toBeGreaterThan(1024 * 1024);
    const result = await run(code);
    expect(result.error).toMatchObject({ kind: "budget" });
    expect(result.error?.message).toContain("1 MiB");
  });

  it("refuses a host call whose arguments pass the limit, in the guest", async () => {
    const small = new Sandbox({ workers: 1, maxCallArgsBytes: 1000 });
    try {
      const calls: string[] = [];
      const result = await small.execute({
        code: `try { await __host_call("x", "a".repeat(5000)); } catch (e) { console.log((e as Error).message); }\nexport default 1;`,
        onCall: async (name) => calls.push(name),
      });
      expect(result).toMatchObject({ ok: true, result: 1 });
      expect(result.stdout).toContain("larger than the 1000 bytes limit");
      expect(calls).toEqual([]);
    } finally {
      await small.close();
    }
  });
});

describe("class 7: one run crashing the bundler does not fail another's", () => {
  it("runs other snippets to success while one crashes esbuild's service", async () => {
    const pair = new Sandbox({ workers: 2 });
    try {
      const crasher = pair.execute({ code: `export default ${"!\n".repeat(400_000)}1;`, timeoutMs: 30_000 });
      let settled = false;
      void crasher.then(() => {
        settled = true;
      });
      const others: ExecuteResult[] = [];
      // Snippets keep bundling, three at a time, for as long as the crash takes and a little after.
      const loop = async () => {
        for (let i = 0; !settled || i < 3; i++)
          others.push(await pair.execute({ code: `import { v } from "m";\nexport default v + ${i};`, modules: () => "export const v = 1;" }));
      };
      await Promise.all([loop(), loop(), loop()]);
      const crashed = await crasher;
      expect(crashed.error).toMatchObject({ kind: "syntax" });
      expect(others.length).toBeGreaterThan(3);
      expect(others.filter((r) => !r.ok).map((r) => r.error?.message)).toEqual([]);
    } finally {
      await pair.close();
    }
  }, 60_000);
});

describe("class 8: strings cross the boundary whole, odd input gets a clear error", () => {
  it("calls the tool named with a NUL whole, not cut at the NUL", async () => {
    const names: string[] = [];
    const result = await run('await __host_call("server__tool\\u0000x", {});\nexport default 1;', { onCall: async (name) => names.push(name) });
    expect(result).toMatchObject({ ok: true });
    expect(names).toEqual(["server__tool\u0000x"]);
  });

  it("keeps console text, rejection messages and error messages whole across a NUL", async () => {
    const result = await run(
      [
        'console.log("before\\u0000after");',
        'try { await __host_call("fail", null); } catch (e) { console.log(JSON.stringify((e as Error).message)); }',
        'throw new Error("head\\u0000tail");',
      ].join("\n"),
      {
        onCall: async () => {
          throw new Error("bad\u0000tail");
        },
      },
    );
    expect(result.stdout).toBe('before\u0000after\n"bad\\u0000tail"\n');
    expect(result.error?.message).toContain("head\u0000tail");
  });

  it("answers an import specifier with control characters as an import error", async () => {
    for (const specifier of ["mcp/a\u0001b", "mcp/a\nb", "\u0007"]) {
      const result = await run(`import x from ${JSON.stringify(specifier)};\nexport default x;`);
      expect(result.error).toMatchObject({ kind: "import", line: 1 });
      expect(result.error?.message).toContain("control characters");
    }
  });

  it("answers a result nested 5,000 deep with a clear result error naming the limit", async () => {
    for (const depth of [5_000, 100_000]) {
      const result = await run(`let v: unknown = 1;\nfor (let i = 0; i < ${depth}; i++) v = [v];\nexport default v;`);
      expect(result.error).toMatchObject({ kind: "result" });
      expect(result.error?.message).toContain("256-level limit");
    }
    const fine = await run("let v: unknown = 1;\nfor (let i = 0; i < 200; i++) v = { v };\nexport default v;");
    expect(fine.ok).toBe(true);
  });
});

describe("class 5: a small value that expands is cut while serializing", () => {
  it("answers a 2-million-entry array of one shared value with a result error naming the limit, stopping at the limit", async () => {
    // Fully expanded this is 72 MB of JSON; the serializer stops after the first MiB.
    const small = new Sandbox({ workers: 1, maxResultBytes: 1024 * 1024 });
    try {
      const result = await small.execute({
        code: "const shared = { a: { b: [1, 2, 3], c: 'xyz' } };\nexport default new Array(2_000_000).fill(shared);",
        timeoutMs: 30_000,
      });
      expect(result.error).toMatchObject({ kind: "result" });
      expect(result.error?.message).toContain("1 MiB limit");
    } finally {
      await small.close();
    }
  }, 40_000);

  it("still serializes toJSON, boxed primitives, holes and undefined like JSON.stringify", async () => {
    const code =
      "export default { d: new Date(0), n: Object(1), s: Object('s'), u: undefined, f() {}, a: [undefined, () => 1, , NaN, -0], nested: { toJSON: () => 'x' } };";
    const result = await run(code);
    expect(result).toMatchObject({ ok: true, result: { d: "1970-01-01T00:00:00.000Z", n: 1, s: "s", a: [null, null, null, null, 0], nested: "x" } });
  });
});

describe("issue 11: each host call has its own signal", () => {
  it("never aborts the signal of a call that already settled, and aborts one still pending at the end", async () => {
    const signals = new Map<string, AbortSignal>();
    const result = await run(
      'await __host_call("done", 1);\nawait __host_call("done-too", 2);\n__host_call("pending", 3).catch(() => {});\nexport default 1;',
      {
        onCall: (name, _args, { signal }) => {
          signals.set(name, signal);
          return name === "pending" ? new Promise(() => undefined) : Promise.resolve(name);
        },
      },
    );
    expect(result).toMatchObject({ ok: true, calls: 3 });
    expect(signals.get("done")?.aborted).toBe(false);
    expect(signals.get("done-too")?.aborted).toBe(false);
    expect(signals.get("pending")?.aborted).toBe(true);
    expect(signals.get("done")).not.toBe(signals.get("done-too"));
  });
});

describe("issue 8: a CodeExecutor that never throws", () => {
  it("is a CodeExecutor, and names its host-call global", async () => {
    const executor: CodeExecutor = sandbox;
    expect(HOST_CALL_GLOBAL).toBe("__host_call");
    const result = await executor.execute({ code: `export default typeof (globalThis as any)[${JSON.stringify(HOST_CALL_GLOBAL)}];` });
    expect(result).toMatchObject({ ok: true, result: "function" });
  });

  it("takes a workerUrl, and a wrong one is a failed run rather than a throw", async () => {
    const explicit = new Sandbox({ workers: 1, workerUrl: new URL("../dist/worker.js", import.meta.url) });
    const wrong = new Sandbox({ workers: 1, workerUrl: new URL("./no-such-worker.js", import.meta.url).href });
    try {
      expect(await explicit.execute({ code: "export default 2;" })).toMatchObject({ ok: true, result: 2 });
      const failed = await wrong.execute({ code: "export default 2;", timeoutMs: 5_000 });
      expect(failed.ok).toBe(false);
      expect(failed.error?.kind).toBe("worker_crashed");
    } finally {
      await explicit.close();
      await wrong.close();
    }
  });
});

describe("issue 10 item 7: errors point at the snippet's own line", () => {
  const files: Record<string, string> = {
    "mcp/bridge.ts": [
      "export async function call(name: string, args: unknown): Promise<unknown> {",
      "  if (typeof args !== 'object') throw new TypeError(`${name}: args must be an object`);",
      "  return __host_call(name, args);",
      "}",
      "declare global { function __host_call(name: string, args: unknown): Promise<unknown>; }",
    ].join("\n"),
  };
  const modules = (specifier: string) => files[specifier];

  it("places an argument error thrown in an imported module at the snippet's call", async () => {
    const result = await run('import { call } from "mcp/bridge.ts";\n\nawait call("t", 5);', { modules });
    expect(result.error).toMatchObject({ kind: "runtime", line: 3 });
    expect(result.error?.message).toMatch(/^snippet\.ts:3:\d+: TypeError: t: args must be an object \(thrown at mcp\/bridge\.ts:2:\d+\)$/);
  });

  it("places a tool's rejection at the snippet's line that made the call", async () => {
    const result = await run('import { call } from "mcp/bridge.ts";\nconst a = 1;\nconst b = await call("t", { a });', {
      modules,
      onCall: async () => {
        throw new Error("the tool failed");
      },
    });
    expect(result.error).toMatchObject({ kind: "runtime", line: 3 });
    expect(result.error?.message).toMatch(/^snippet\.ts:3:\d+: Error: the tool failed/);
  });

  it("names the value in a not-a-function error", async () => {
    const result = await run("const items: any = { count: 2 };\nconst names = items.map((x: unknown) => x);\nexport default names;");
    expect(result.error).toMatchObject({ kind: "runtime", line: 2 });
    expect(result.error?.message).toContain("TypeError: items.map is not a function");
  });
});
