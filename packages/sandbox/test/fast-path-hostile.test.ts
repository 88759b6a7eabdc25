import { type ExecuteRequest, Sandbox } from "@codemux/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import { keptPath, viaEsbuild } from "./kept-path";

// Hostile snippets against the fast path (es-module-lexer + sucrase + QuickJS linking): it must
// never allow what esbuild refuses, never run a side effect twice, and never stall the caller.
// Tests of the fast path itself pin it on, whatever CODEMUX_SANDBOX_FAST_PATH says.
const sandbox = new Sandbox({ workers: 2, fastPath: true });
afterAll(() => sandbox.close());

const files: Record<string, string> = {
  "mcp/ok.ts": "export const ok = 1;\nexport interface Shape { a: number }",
};
const modules = (specifier: string) => files[specifier];

async function runKept(request: ExecuteRequest) {
  const kept: string[] = [];
  const names: string[] = [];
  const run = await sandbox.execute({
    modules,
    timeoutMs: 10_000,
    onCall: async (name, args) => (names.push(name), args),
    ...request,
    onBundle: (bundle) => kept.push(bundle.bundle),
  });
  return { run, path: keptPath(kept), names };
}

/** The fast path's outcome must be esbuild's: same ok, result, error kind and message. */
async function expectSameAsEsbuild(code: string) {
  const fast = await runKept({ code });
  const slow = await runKept({ code: viaEsbuild(code) });
  expect(slow.path === "esbuild" || slow.path === "none", code).toBe(true);
  expect({ ok: fast.run.ok, result: fast.run.result, kind: fast.run.error?.kind, message: fast.run.error?.message }, code).toEqual({
    ok: slow.run.ok,
    result: slow.run.result,
    kind: slow.run.error?.kind,
    message: slow.run.error?.message,
  });
  return fast;
}

describe("the fast path refuses every import esbuild refuses", () => {
  it("sees an unused import the lexer skips after a non-null assertion (`a! / b` reads as a regular expression)", async () => {
    const code = 'let a: any = 4, b = 2, g = 1;\nconst r = a! / b; import fs from "node:fs"; const z = a! / g;\nexport default 1;';
    const { run } = await expectSameAsEsbuild(code);
    expect(run.error).toMatchObject({ kind: "import", line: 2, column: 34 });
  });

  it("sees a type-only re-export the lexer skips, which sucrase drops but esbuild checks", async () => {
    const code = 'let a: any = 4, b = 2;\nconst r = a! / b; export { type Stats } from "node:fs"; const z = a! / b;\nexport default 1;';
    const { run } = await expectSameAsEsbuild(code);
    expect(run.error?.kind).toBe("import");
  });

  // esbuild drops a module's unused imports before it resolves them (only the snippet's are checked
  // with verbatimModuleSyntax), so both paths run this; a module's used import is refused by both.
  it("treats an import a module (a saved skill) hides from the lexer as esbuild does", async () => {
    const tree: Record<string, string> = {
      "skills/sly.ts": 'let a: any = 4;\n// @ts-ignore\nconst r = a! / 2; import fs from "node:fs"; const z = a! / 2;\nexport const sly = 1;',
    };
    const code = 'import { sly } from "skills/sly.ts";\nexport default sly;';
    const fast = await runKept({ code, modules: (specifier) => tree[specifier] });
    const slow = await runKept({ code: viaEsbuild(code), modules: (specifier) => tree[specifier] });
    expect(fast.run).toMatchObject({ ok: slow.run.ok, result: slow.run.result });
    tree["skills/sly.ts"] = (tree["skills/sly.ts"] as string).replace("export const sly = 1;", "export const sly = typeof fs;");
    const used = await runKept({ code, modules: (specifier) => tree[specifier] });
    expect(used.run.error?.kind).toBe("import");
  });

  it("sees an import inside a block, where the lexer does not look", async () => {
    await expectSameAsEsbuild('if (Math.random() > 2) { import fs from "node:fs"; }\nexport default 1;');
    await expectSameAsEsbuild('declare module "x" { import fs from "node:fs"; }\nexport default 1;');
  });

  it("treats `import type A, { b }` (not TypeScript) as esbuild does, not as a type-only import", async () => {
    const { run } = await expectSameAsEsbuild('import type A, { b } from "node:fs";\nexport default 1;');
    expect(run.error?.kind).toBe("syntax");
    await expectSameAsEsbuild('import type A, { ok } from "mcp/ok.ts";\nexport default 1;');
  });

  it("refuses unused imports and re-exports of unavailable modules in every spelling", async () => {
    const refused = [
      'import fs from "node:fs";\nexport default 1;',
      'import {} from "mcp/nope.ts";\nexport default 1;',
      'import "mcp/nope.ts";\nexport default 1;',
      'import * as ns from "mcp/../../etc/passwd";\nexport default 1;',
      'import x from "\\u006eode:fs";\nexport default 1;',
      'import { type T } from "node:fs";\nexport default 1;',
      'import x, { type T } from "mcp/nope.ts";\nexport default 1;',
      'export * from "node:fs";\nexport default 1;',
      'export * as ns from "node:fs";\nexport default 1;',
      'export { x } from "node:fs";\nexport default 1;',
      'import data from "mcp/nope.json" with { type: "json" };\nexport default 1;',
      'import fs from "https://example.com/x.js";\nexport default 1;',
    ];
    for (const code of refused) {
      const { run } = await expectSameAsEsbuild(code);
      expect(run.error?.kind, code).toBe("import");
    }
  });

  it("finds no import hidden in comments, strings, templates or regular expressions, and runs them right", async () => {
    const tricky = [
      '// import fs from "node:fs";\nexport default 1;',
      '/* import fs from "node:fs"; */ export default 1;',
      "const s = \"import fs from 'node:fs'\";\nexport default s.length;",
      'const t = `${"x"}\nimport fs from "node:fs";\n`;\nexport default t.length;',
      "const re = /import fs from 'node:fs'/;\nexport default re.source.length;",
      "const o = { import: 1, export: 2 };\nexport default o.import + o.export;",
      'const a: any = 4;\nconst r = a! / 2; const s = "import"; const z = a! / 2;\nexport default r + z;',
      "export {};\nexport default 3;",
      "const ok = 2;\nexport { ok };\nexport default ok;",
    ];
    for (const code of tricky) await expectSameAsEsbuild(code);
  });

  it("refuses escaped keywords and dynamic import() in every form, even while the modules link", async () => {
    const loaded = '.then(() => "loaded", (e: Error) => e.message)';
    const codes = [
      '\\u0069mport fs from "node:fs";\nexport default 1;',
      'imp\\u006frt fs from "node:fs";\nexport default 1;',
      'export default await import("mcp/ok.ts");',
      'export default await import /* x */ ("node:fs");',
      `const load = new Function("return import('mcp/ok.ts')");\nexport default await load()${loaded};`,
      `export default await (0, eval)("import('mcp/ok.ts')")${loaded};`,
      `export default await eval("import('mcp/ok.ts')")${loaded};`,
      // Called before the first await, while QuickJS links the snippet's modules: the loader serves only static imports.
      `import { ok } from "mcp/ok.ts";\nconst p = new Function("return im" + "port('mcp/ok.ts')")();\nexport default await p${loaded};`,
      `import { ok } from "mcp/ok.ts";\nconst p = eval("im" + "port('./snippet.ts')");\nexport default await p${loaded};`,
    ];
    for (const code of codes) {
      const { run } = await runKept({ code });
      expect(run.ok ? run.result : run.error?.kind, code).not.toBe("loaded");
      if (run.ok) expect(run.result, code).toMatch(/import\(\)/);
    }
  });
});

describe("the fast path never repeats a side effect when it runs a snippet again through esbuild", () => {
  it("sends a call made before a synchronous throw once (from the esbuild run), and no timer or microtask of the first run", async () => {
    const code = [
      '__host_call("before", 1);',
      'setTimeout(() => __host_call("timer", 1), 0);',
      'queueMicrotask(() => { __host_call("micro", 1); });',
      'Promise.resolve().then(() => __host_call("then", 1));',
      'throw new Error("sync");',
    ].join("\n");
    const { run, names } = await runKept({ code });
    expect(run.error).toMatchObject({ kind: "runtime", line: 5 });
    expect(names).toEqual([]);
  });

  it("shows output written by a getter the host reads on the thrown error once", async () => {
    const code =
      'const e = new Error("x");\nObject.defineProperty(e, "message", { get() { __host_call("getter", 1); console.log("getter ran"); return "m"; } });\nthrow e;';
    const { run, names } = await runKept({ code });
    expect(run).toMatchObject({ ok: false, stdout: "getter ran\n", error: { message: "snippet.ts:1:20: Error: m" } });
    expect(names).toEqual([]);
  });

  it("runs a class static block's call and a call from an imported module once", async () => {
    const code = 'import { ok } from "mcp/ok.ts";\nclass C { static { __host_call("static", ok); } }\nthrow new Error("x");';
    const { run, names } = await runKept({ code });
    expect(run.error).toMatchObject({ kind: "runtime", line: 3 });
    expect(names).toEqual([]);
  });

  it("does not run again a snippet that wrote output or yielded before it failed", async () => {
    const wrote = await runKept({ code: 'console.log("once");\n__host_call("late", 1);\nthrow new Error("x");' });
    expect(wrote).toMatchObject({ path: "fast", names: [], run: { stdout: "once\n" } });
    const yielded = await runKept({ code: 'await __host_call("a", 1);\nthrow new Error("after");' });
    expect(yielded).toMatchObject({ path: "fast", names: ["a"], run: { error: { kind: "runtime", line: 2 } } });
  });
});

describe("the fast path: positions and pathological input", () => {
  it("maps only frames of the snippet and its modules: a forged stack keeps no host path", async () => {
    const code =
      'await 0;\nconst err: any = new Error("m");\nerr.stack = "    at f (/home/host/secret.js:1:1)\\n    at g (/etc/passwd:2:2)\\n    at prelude.js:1:1";\nthrow err;';
    const { run, path } = await runKept({ code });
    expect(path).toBe("fast");
    expect(run.error?.message).toBe("snippet.ts: Error: m");
    expect(run.error?.stack ?? "").not.toMatch(/secret|passwd|prelude/);
  });

  it("keeps lines across CRLF, CR, U+2028 and U+2029 line ends as esbuild does", async () => {
    for (const end of ["\r\n", "\r", "\u2028", "\u2029"]) {
      const { run } = await expectSameAsEsbuild(["const a: number = 1;", "await 0;", "const o: any = null;", "o.x;"].join(end));
      expect(run.error, JSON.stringify(end)).toMatchObject({ line: 4, column: 2 });
    }
  });

  it("leaves import.meta to esbuild, which holds nothing of the host", async () => {
    const { run, path } = await runKept({ code: "export default import.meta;" });
    expect(path).toBe("esbuild");
    expect(run).toMatchObject({ ok: true, result: {} });
  });

  it("answers pathological snippets under the fast path's limits (deep nesting, long lines, many imports, huge names)", async () => {
    const codes = [
      `export default ${"(".repeat(900)}1${")".repeat(900)};`,
      `export default ${"[".repeat(900)}1${"]".repeat(900)}.flat(Infinity)[0];`,
      `const x = ${"{a: ".repeat(500)}1${"}".repeat(500)};\nexport default 1;`,
      `export default \`\${${"`${".repeat(300)}1${"}`".repeat(300)}}\`;`,
      `const ${"a".repeat(15_000)} = 1;\nexport default 1;`,
      `${'import { ok } from "mcp/ok.ts";\n'.repeat(400)}export default ok;`,
      `export default [${"/a/g, ".repeat(2_000)}].length;`,
      `let a: any = 1;\nexport default a${"! / 1".repeat(2_000)};`,
      `export default 1;${"\u2028".repeat(8_000)}`,
      `export default ${"a ? (b) : ".repeat(1_000)}1;`,
    ];
    for (const code of codes) {
      const { run } = await runKept({ code });
      expect(["ok", "runtime", "syntax", "stack_overflow"], code.slice(0, 60)).toContain(run.ok ? "ok" : run.error?.kind);
    }
  });
});

describe("the fast path runs TypeScript as esbuild does", () => {
  it("initializes a class field from a parameter property as esbuild does", async () => {
    await expectSameAsEsbuild("class A { y = this.x * 2; constructor(public x: number) {} }\nexport default new A(3).y;");
    await expectSameAsEsbuild(
      "class A {\n  readonly base = this.url + '/api';\n  constructor(\n    private readonly url: string,\n  ) {}\n  get() { return this.base; }\n}\nexport default new A('x').get();",
    );
    const tree: Record<string, string> = { "skills/client.ts": "export class Client { base = this.url + '/api'; constructor(protected url: string) {} }" };
    const code = 'import { Client } from "skills/client.ts";\nexport default new Client("x").base;';
    const { run } = await runKept({ code, modules: (specifier) => tree[specifier] });
    expect(run).toMatchObject({ ok: true, result: "x/api" });
  });

  it("keeps a class with `declare readonly` fields and a plain constructor (the tool bridge's ToolError) on the fast path", async () => {
    const tree: Record<string, string> = {
      "mcp/err.ts":
        "export class E extends Error {\n  declare readonly tool: string;\n  constructor(tool: string, m: { a: number }) {\n    super(tool);\n    this.tool = tool;\n  }\n}",
    };
    const code = 'import { E } from "mcp/err.ts";\nexport default new E("t", { a: 1 }).tool;';
    const { run, path } = await runKept({ code, modules: (specifier) => tree[specifier] });
    expect(run).toMatchObject({ ok: true, result: "t" });
    expect(path).toBe("fast");
    // A modifier in a constructor's parameters, however it is laid out, still goes to esbuild.
    for (const params of ["(private a: number)", "(\n  a = [1, 2],\n  readonly b: string,\n)", "(a = { k: 1 }, public b = 2)"]) {
      const { path: via } = await runKept({ code: `class K { constructor${params} {} }\nexport default 1;` });
      expect(via, params).toBe("esbuild");
    }
  });

  it("keeps TypeScript-only class and enum forms the same on both paths", async () => {
    const codes = [
      "enum E { A = 1, B = A * 2 }\nexport default E.B;",
      "const enum K { A = 3 }\nexport default K.A;",
      "class D { declare x: number; }\nexport default Object.keys(new D()).length;",
      "class F { x!: number; y?: number; }\nexport default Object.keys(new F()).length;",
      "class B { set v(x: number) { (this as any).seen = x; } }\nclass C extends B { v = 5; }\nexport default (new C() as any).seen ?? 'no setter';",
      "namespace N { export const a = 1; }\nexport default N.a;",
      "function f(this: { n: number }, k: number) { return this.n * k; }\nexport default f.call({ n: 2 }, 3);",
      "abstract class S { abstract n(): number; twice() { return this.n() * 2; } }\nclass T extends S { n() { return 4; } }\nexport default new T().twice();",
    ];
    for (const code of codes) await expectSameAsEsbuild(code);
  });
});

describe("the fast path: the compiled-module cache", () => {
  it("links the same source at two paths each to its own relative imports", async () => {
    const tree: Record<string, string> = {
      "a/x.ts": 'export { v } from "./v.ts";',
      "b/x.ts": 'export { v } from "./v.ts";',
      "a/v.ts": "export const v: number = 1;",
      "b/v.ts": "export const v: number = 2;",
    };
    const code = 'import { v as a } from "a/x.ts";\nimport { v as b } from "b/x.ts";\nexport default [a, b];';
    const { run, path } = await runKept({ code, modules: (specifier) => tree[specifier] });
    expect(path).toBe("fast");
    expect(run).toMatchObject({ ok: true, result: [1, 2] });
  });

  it("serves each run its own resolver's source for a path, never an earlier run's", async () => {
    const code = 'import { who } from "skills/mine.ts";\nexport default who;';
    for (const who of ["alice", "bob", "alice"]) {
      const { run } = await runKept({
        code,
        modules: (specifier) => (specifier === "skills/mine.ts" ? `export const who: string = ${JSON.stringify(who)};` : undefined),
      });
      expect(run).toMatchObject({ ok: true, result: who });
    }
  });

  it("does not let a snippet named like a module stand in for it: the import gets the module", async () => {
    const { run, path } = await runKept({ code: 'import { ok } from "./ok.ts";\nexport const mine = 2;\nexport default ok;', filename: "mcp/ok.ts" });
    expect(path).toBe("esbuild");
    expect(run).toMatchObject({ ok: true, result: 1 });
  });
});

describe("running again through esbuild", () => {
  // A fast-path run that fails before anything of it is seen goes again through esbuild for its messages,
  // but only when it failed quickly: one that computed a while keeps its own error, is not run twice, and
  // does not turn into a timeout for having used up its deadline twice.
  it("gives esbuild's answer for a snippet that failed to link at once, however long the run took for other reasons (a loaded machine, an engine still being built)", async () => {
    // Each engine evaluates this preloaded module for 400 ms before a run can start on it: the run's wall time is long, its own work tiny.
    const slowEngines = new Sandbox({
      workers: 1,
      fastPath: true,
      preloadModules: { "mcp/slow.ts": "const end = Date.now() + 400;\nwhile (Date.now() < end) {}\nexport const slow = 1;" },
    });
    try {
      await slowEngines.execute({ code: "export default 1;" });
      const run = await slowEngines.execute({ code: 'import { nope } from "mcp/ok.ts";\nexport default nope;', modules, timeoutMs: 5_000 });
      expect(run.durationMs).toBeGreaterThan(300);
      expect(run.error).toMatchObject({ kind: "import", line: 1 });
    } finally {
      await slowEngines.close();
    }
  });

  it("reports the error of a snippet that throws late in its first synchronous stretch, and runs it once", async () => {
    const code = "const end = Date.now() + 600;\nwhile (Date.now() < end) {}\nthrow new Error('boom');";
    // The deadline leaves room for a loaded machine; running it twice is caught by the path, not by a timeout.
    const { run, path } = await runKept({ code, timeoutMs: 3_000 });
    expect(run.error).toMatchObject({ kind: "runtime", message: "snippet.ts:3:16: Error: boom" });
    expect(path).toBe("fast");
  });
});
