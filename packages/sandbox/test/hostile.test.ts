import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { type ExecuteRequest, type ExecuteResult, Sandbox } from "@codemux/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

/** One worker, so every run after an attack lands on the worker the attack ran on. */
const sandbox = new Sandbox({ workers: 1 });
const SECRET = `codemux-secret-${process.pid}-${Date.now()}`;
let secretDir = "";
let secretFile = "";

beforeAll(() => {
  secretDir = mkdtempSync(join(tmpdir(), "codemux-sandbox-"));
  secretFile = join(secretDir, "secret.json");
  writeFileSync(secretFile, JSON.stringify({ secret: SECRET }));
});

afterAll(async () => {
  rmSync(secretDir, { recursive: true, force: true });
  await sandbox.close();
});

// Every attack must leave a working sandbox behind.
afterEach(async () => {
  expect(await sandbox.execute({ code: "export default 6 * 7;" })).toMatchObject({ ok: true, result: 42 });
});

const run = (code: string, request: Partial<ExecuteRequest> = {}): Promise<ExecuteResult> => sandbox.execute({ code, timeoutMs: 5_000, ...request });

function expectContained(result: ExecuteResult, kind: string): void {
  expect(result.ok).toBe(false);
  expect(result.error?.kind).toBe(kind);
  expect(result.error?.message.length).toBeGreaterThan(0);
  expect(JSON.stringify(result)).not.toContain(SECRET);
}

describe("hostile snippets: ambient authority", () => {
  it("has no process, require, module loader globals, std/os or network", async () => {
    const names = ["process", "require", "module", "Buffer", "fetch", "WebSocket", "XMLHttpRequest", "WebAssembly", "std", "os", "scriptArgs", "print"];
    const result = await run(`export default Object.fromEntries(${JSON.stringify(names)}.map((n) => [n, typeof (globalThis as any)[n]]));`);
    expect(result.ok).toBe(true);
    for (const name of names) expect(result.result, name).toHaveProperty(name, "undefined");
  });

  it("fails cleanly on process.env", async () => {
    const result = await run("export default process.env.HOME;");
    expectContained(result, "runtime");
    expect(result.error?.message).toMatch(/ReferenceError: .process. is not defined/);
  });

  it("fails cleanly on require()", async () => {
    const result = await run("const r = (globalThis as any).require;\nexport default r('fs');");
    expectContained(result, "runtime");
  });

  it("finds no process through the Function constructor", async () => {
    const result = await run(
      "const F = ({}).constructor.constructor;\nexport default [F('return typeof process')(), typeof Function('return this')().process, typeof F('return this')().require];",
    );
    expect(result).toMatchObject({ ok: true, result: ["undefined", "undefined", "undefined"] });
  });

  it("fails cleanly on this.constructor.constructor('return process')()", async () => {
    const result = await run("const p = (this as any).constructor.constructor('return process')();\nexport default p.pid;");
    expectContained(result, "runtime");
  });

  it("cannot block the worker with Atomics.wait", async () => {
    const result = await run("Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);", { timeoutMs: 1_000 });
    expect(result.ok).toBe(false);
    expect(result.durationMs).toBeLessThan(60_000);
  });
});

describe("hostile snippets: imports", () => {
  it("refuses import fs from 'node:fs'", async () => {
    const result = await run('import fs from "node:fs";\nexport default fs.readFileSync("/etc/passwd", "utf8");');
    expectContained(result, "import");
    expect(result.error).toMatchObject({ line: 1 });
    expect(result.error?.message).toContain('"node:fs"');
  });

  it("refuses the bare 'fs' and the QuickJS std and os modules", async () => {
    for (const specifier of ["fs", "std", "os", "child_process"]) {
      const result = await run(`import * as m from "${specifier}";\nexport default Object.keys(m);`);
      expectContained(result, "import");
      expect(result.error?.message).toContain(`"${specifier}"`);
    }
  });

  it("refuses dynamic import() of a literal at bundle time", async () => {
    const result = await run('\nconst fs = await import("node:fs");\nexport default typeof fs;');
    expectContained(result, "import");
    expect(result.error).toMatchObject({ line: 2 });
  });

  it("refuses dynamic import() of a computed name at run time", async () => {
    const result = await run("const name = ['f', 's'].join('');\nconst fs = await import(name);\nexport default typeof fs;");
    expectContained(result, "runtime");
    expect(result.error?.message).toContain("import() is not available");
  });

  it("refuses /etc/passwd and a host file with a secret by absolute path", async () => {
    for (const path of ["/etc/passwd", secretFile]) {
      const result = await run(`import data from ${JSON.stringify(path)};\nexport default data;`);
      expectContained(result, "import");
    }
  });

  it("refuses climbing relative paths, to /etc/passwd and to the secret file", async () => {
    const climb = `${"../".repeat(12)}${relative("/", secretFile)}`;
    for (const path of ["../../../../etc/passwd", climb, "./../secret.json"]) {
      const result = await run(`import data from ${JSON.stringify(path)};\nexport default data;`, {
        modules: (specifier) => (specifier === "mcp/a.ts" ? "export const a = 1;" : undefined),
      });
      expectContained(result, "import");
    }
  });

  it("refuses URLs", async () => {
    const result = await run('import x from "https://example.com/x.js";\nexport default x;');
    expectContained(result, "import");
  });
});

describe("hostile snippets: limits", () => {
  it("ends an endless loop as a timeout", async () => {
    const result = await run("let i = 0;\nwhile (true) { i++; }", { timeoutMs: 300 });
    expectContained(result, "timeout");
    expect(result.error?.message).toContain("300 ms");
  });

  it("ends an endless loop that swallows exceptions as a timeout", async () => {
    const result = await run("while (true) { try { while (true) {} } catch { /* keep going */ } }", { timeoutMs: 300 });
    expectContained(result, "timeout");
  });

  it("ends a memory bomb as a memory error", async () => {
    const result = await run("const hoard: Uint8Array[] = [];\nwhile (true) hoard.push(new Uint8Array(8 * 1024 * 1024));");
    expectContained(result, "memory");
    expect(result.error?.message).toContain("64 MiB");
  });

  it("ends deep recursion as a stack overflow", async () => {
    const result = await run("function down(n: number): number { return down(n + 1) + 1; }\nexport default down(0);");
    expectContained(result, "stack_overflow");
    expect(result.error).toMatchObject({ line: 1 });
  });

  it("caps an output flood on both streams and marks the cut", async () => {
    const result = await run(
      "const line = 'x'.repeat(1000);\nfor (let i = 0; i < 5000; i++) { console.log(line); console.error(line); }\nexport default 'flooded';",
    );
    expect(result).toMatchObject({ ok: true, result: "flooded", stdoutTruncated: true, stderrTruncated: true });
    for (const text of [result.stdout, result.stderr]) {
      expect(text.endsWith("\n[output truncated at 1 MiB]")).toBe(true);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024 * 1024 + 64);
    }
  });

  it("caps pending timers", async () => {
    const result = await run("for (let i = 0; i < 100000; i++) setTimeout(() => {}, 1e9);");
    expectContained(result, "runtime");
    expect(result.error?.message).toContain("Too many pending timers");
  });

  it("ends a snippet awaiting a promise that never settles as a timeout", async () => {
    const result = await run("await new Promise(() => {});\nexport default 'never';");
    expectContained(result, "timeout");
  });

  it("ends a snippet awaiting a host call that never answers at its deadline", async () => {
    const result = await run("export default await __host_call('hang', null);", { timeoutMs: 300, onCall: () => new Promise(() => undefined) });
    expectContained(result, "timeout");
    expect(result.calls).toBe(1);
  });
});

describe("hostile snippets: the bridge and isolation between runs", () => {
  it("rejects garbage payloads to __host_call without reaching the host", async () => {
    const calls: string[] = [];
    const result = await run(
      [
        "const attempts: Array<() => Promise<unknown>> = [",
        "  () => { const a: any = {}; a.self = a; return __host_call('x', a); },",
        "  () => __host_call('x', 10n as any),",
        "  () => (__host_call as any)({ toString() { return 'sneaky'; } }, {}),",
        "  () => (__host_call as any)(),",
        "];",
        "const outcomes = [];",
        "for (const attempt of attempts) {",
        "  try { await attempt(); outcomes.push('resolved'); } catch (e) { outcomes.push((e as Error).name); }",
        "}",
        "export default outcomes;",
      ].join("\n"),
      { onCall: async (name) => calls.push(name) },
    );
    expect(result).toMatchObject({ ok: true, result: ["TypeError", "TypeError", "TypeError", "TypeError"], calls: 0 });
    expect(calls).toEqual([]);
  });

  it("leaves no global state for the next run", async () => {
    await run("(globalThis as any).leak = 'from run 1';\n(globalThis as any).console = null;\nexport default 1;");
    const second = await run("console.log('console works');\nexport default typeof (globalThis as any).leak;");
    expect(second).toMatchObject({ ok: true, result: "undefined", stdout: "console works\n" });
  });

  it("keeps prototype pollution inside the run", async () => {
    await run(
      "(Object.prototype as any).polluted = 'yes';\nArray.prototype.map = () => ['hijacked'];\nJSON.stringify = () => '\"hijacked\"';\nexport default 1;",
    );
    const second = await run("export default [({} as any).polluted ?? 'clean', [1, 2].map((x) => x * 2)];");
    expect(second).toMatchObject({ ok: true, result: ["clean", [2, 4]] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("cannot reach the host functions behind console and the timers", async () => {
    const result = await run("export default Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith('__'));");
    expect(result).toMatchObject({ ok: true, result: ["__host_call"] });
  });
});

describe("hostile snippets: the bundler", () => {
  it("restarts esbuild after nesting deep enough to crash it, so later runs still bundle", async () => {
    // Runs of `!` and deep brackets are refused before esbuild (nesting.test.ts); a chain of `void` still reaches it.
    const result = await run(`export default ${"void\n".repeat(200_000)}1;`, { timeoutMs: 30_000 });
    expectContained(result, "syntax");
    expect(result.error?.message).toContain("restarted");
  }, 30_000);

  it("refuses an import of a builtin or a host file even when its binding is never used", async () => {
    for (const [code, specifier] of [
      ['import fs from "node:fs";\nexport default 1;', "node:fs"],
      ["const a = 1;\nimport * as secret from '/etc/passwd';\nexport default a;", "/etc/passwd"],
      ['import { x } from "mcp/nowhere";\nexport default 2;', "mcp/nowhere"],
    ] as const) {
      const result = await run(code);
      expectContained(result, "import");
      expect(result.error?.message).toContain(`Cannot import "${specifier}"`);
      expect(result.error?.line).toBe(code.split("\n").findIndex((l) => l.includes(specifier)) + 1);
    }
  });

  it("still accepts an import used only as a type, from a module that exists", async () => {
    const modules = (specifier: string) => (specifier === "mcp/types" ? "export interface Thing { name: string }\nexport const kind = 'thing';" : undefined);
    const result = await run(
      'import { Thing } from "mcp/types";\nimport type { Thing as Same } from "mcp/types";\nconst t: Thing & Same = { name: "ok" };\nexport default t.name;',
      { modules },
    );
    expect(result).toMatchObject({ ok: true, result: "ok" });
  });

  it("refuses a long line packed with errors before esbuild answers with the line once per error", async () => {
    const result = await run(`export default ${"-".repeat(30_000)}1;`);
    expectContained(result, "syntax");
    expect(result.error?.message).toContain("too long to bundle safely");
  }, 60_000);

  it("still takes a long line of data a model pasted into its snippet", async () => {
    const data = JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ id: i, name: `item ${i}` })));
    expect(data.length).toBeGreaterThan(8_000);
    const result = await run(`const rows = ${data};\nexport default rows.length;`);
    expect(result).toMatchObject({ ok: true, result: 400 });
  });

  it("does not print deeply nested code indented by its depth", async () => {
    const result = await run(`${"{\n".repeat(20_000)}${"}\n".repeat(20_000)}export default 1;`);
    expect(result.ok).toBe(false);
    expect(result.error?.kind).not.toBe("internal");
  }, 60_000);
});
