import { type ExecuteRequest, Sandbox } from "@codemux/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import { keptPath, viaEsbuild } from "./kept-path";

// Tests of the fast path itself pin it on, whatever CODEMUX_SANDBOX_FAST_PATH says.
const sandbox = new Sandbox({ workers: 2, fastPath: true });
afterAll(() => sandbox.close());

async function runKept(request: ExecuteRequest) {
  const kept: string[] = [];
  const run = await sandbox.execute({ ...request, onBundle: (bundle) => kept.push(bundle.bundle) });
  return { run, path: keptPath(kept) };
}

const files: Record<string, string> = {
  "mcp/lib.ts": "\nexport function fail(): never {\n  throw new RangeError('from lib');\n}",
  "mcp/types.ts": "export interface Issue { title: string }\nexport const version = 2;",
  "mcp/reexport.ts": 'export { Issue, version } from "./types.ts";',
};
const modules = (specifier: string) => files[specifier];

describe("the fast path (no esbuild)", () => {
  it("is taken for a plain snippet and one with imports, and esbuild for code it leaves", async () => {
    expect(await runKept({ code: "export default 1 + 1;" })).toMatchObject({ run: { ok: true, result: 2 }, path: "fast" });
    const imported = await runKept({ code: 'import { version } from "mcp/types.ts";\nexport default version;', modules });
    expect(imported).toMatchObject({ run: { ok: true, result: 2 }, path: "fast" });
    expect(await runKept({ code: viaEsbuild("export default 1 + 1;") })).toMatchObject({ run: { ok: true, result: 2 }, path: "esbuild" });
  });

  it("hands a syntax error to esbuild, which reports it at its line and column", async () => {
    const { run, path } = await runKept({ code: "const ok = 1;\n\nconst broken = (;\n" });
    expect(path).toBe("none");
    expect(run.error).toMatchObject({ kind: "syntax", line: 3, column: 17 });
    expect(run.error?.message).toBe('snippet.ts:3:17: Unexpected ";"');
  });

  it("hands code that sucrase strips but QuickJS refuses to compile to esbuild", async () => {
    const { run } = await runKept({ code: "let a = 1;\nlet a = 2;\nexport default a;" });
    expect(run.error).toMatchObject({ kind: "syntax", line: 2, column: 5 });
    expect(run.error?.message).toBe('snippet.ts:2:5: The symbol "a" has already been declared');
  });

  it("hands a failed link to esbuild: a missing export is an import error", async () => {
    const { run } = await runKept({ code: 'import { nope } from "mcp/types.ts";\nexport default nope;', modules });
    expect(run.error).toMatchObject({ kind: "import", line: 1, column: 10 });
    expect(run.error?.message).toBe('snippet.ts:1:10: No matching export in "mcp/types.ts" for import "nope"');
  });

  it("runs a snippet once when linking failed and esbuild's bundle runs it (a re-exported interface)", async () => {
    const names: string[] = [];
    const code = 'import { version } from "mcp/reexport.ts";\nconsole.log("ran");\nexport default (await __host_call("v", version)) as number;';
    const { run, path } = await runKept({ code, modules, onCall: async (name, args) => (names.push(name), args) });
    expect(run).toMatchObject({ ok: true, result: 2, calls: 1, stdout: "ran\n" });
    expect(names).toEqual(["v"]);
    expect(path).toBe("esbuild");
  });

  it("runs a snippet that throws before it yields again through esbuild: no call or output of it was seen", async () => {
    const names: string[] = [];
    const code = '__host_call("never", 1);\nconst n: number = JSON.parse("{");';
    const { run, path } = await runKept({ code, onCall: async (name) => names.push(name) });
    expect(path).toBe("esbuild");
    expect(run).toMatchObject({ ok: false, calls: 0, stdout: "", error: { kind: "runtime", line: 2 } });
    expect(names).toEqual([]);
  });

  it("reports a throw after console output from the fast path, the output once", async () => {
    const { run, path } = await runKept({ code: 'console.log("once");\nthrow new TypeError("after output");' });
    expect(path).toBe("fast");
    expect(run).toMatchObject({ ok: false, stdout: "once\n", error: { kind: "runtime", line: 2, message: "snippet.ts:2:20: TypeError: after output" } });
  });

  it("reports a runtime error at the same line and column as the esbuild path", async () => {
    // After a yield: a throw in the first synchronous stretch with no output is run again through esbuild.
    const code = "interface I { n: number } await 0;\nconst o: any = null; const typed: I = { n: 1 };   o.field;";
    const fast = await runKept({ code });
    const slow = await runKept({ code: viaEsbuild(code) });
    expect(fast.path).toBe("fast");
    expect(slow.path).toBe("esbuild");
    expect(fast.run.error).toMatchObject({ kind: "runtime", line: 2, column: 52 });
    expect(fast.run.error?.message).toBe(slow.run.error?.message);
    expect(fast.run.error?.stack).toBe(slow.run.error?.stack);
  });

  it("maps an error thrown inside a module to that module's line and column, as esbuild's map did", async () => {
    const code = "import { fail } from 'mcp/lib.ts'; await 0;\n\nconst typed: number = 1; fail();";
    const fast = await runKept({ code, filename: "task.ts", modules });
    const slow = await runKept({ code: viaEsbuild(code), filename: "task.ts", modules });
    expect(fast.path).toBe("fast");
    expect(fast.run.error?.message).toBe("task.ts:3:30: RangeError: from lib (thrown at mcp/lib.ts:3:23)");
    expect(fast.run.error?.message).toBe(slow.run.error?.message);
  });

  it("names the callee of a 'not a function' error through the stripped types", async () => {
    const code = "const api: { go?: () => void } = {}; await 0;\napi.go!();";
    const fast = await runKept({ code });
    expect(fast.path).toBe("fast");
    expect(fast.run.error?.message).toBe("snippet.ts:2:7: TypeError: api.go is not a function");
  });

  it("refuses import() made at run time, even of a module the snippet imported", async () => {
    const code = [
      'import { version } from "mcp/types.ts";',
      // Spelled in two parts: a snippet with the word "import" anywhere but its imports goes through esbuild.
      "const load = new Function('return im' + 'port(\"mcp/types.ts\")');",
      "export default await load().then(() => 'loaded', (error: Error) => error.message);",
    ].join("\n");
    const { run, path } = await runKept({ code, modules });
    expect(path).toBe("fast");
    expect(run).toMatchObject({ ok: true, result: "import() is not available in the sandbox" });
  });

  it("keeps the snippet as run and its modules for --keep-bundle", async () => {
    const kept: Array<{ entry: string; bundle: string; map: string }> = [];
    const code = 'import { version } from "mcp/types.ts";\nconst n: number = version;\nexport default n;';
    await sandbox.execute({ code, modules, onBundle: (bundle) => kept.push(bundle) });
    expect(kept).toHaveLength(1);
    expect(kept[0]?.entry).toBe(code);
    expect(kept[0]?.bundle).toContain("const n = version;");
    expect(kept[0]?.bundle).toContain('// ---- module "mcp/types.ts" ----\n\nexport const version = 2;');
    expect(JSON.parse(kept[0]?.map ?? "{}")).toMatchObject({ sources: ["snippet.ts"] });
  });
});

describe("the fast path: hostile input", () => {
  it("leaves nested type assertions, exponential for sucrase's parser, to esbuild's linear one", async () => {
    // 40 levels would take sucrase longer than the run's deadline (each level doubles its work).
    const code = `export default ${"<number>(".repeat(40)}1${")".repeat(40)};`;
    const { run, path } = await runKept({ code, timeoutMs: 5_000 });
    expect(run).toMatchObject({ ok: true, result: 1 });
    expect(path).toBe("esbuild");
  });
});
