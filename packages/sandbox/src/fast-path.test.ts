import { describe, expect, it } from "vitest";
import * as fastPath from "./fast-path.js";

const { planFast } = fastPath;
const files: Record<string, string> = {
  "mcp/math/index.ts":
    'import { base } from "./base.ts";\nimport type { Unit } from "./missing-types.ts";\nexport const add = (a: number): number => a + base;',
  "mcp/math/base.ts": "export const base: number = 40;",
};
const modules = (specifier: string) => files[specifier];

describe("planFast", () => {
  it("plans a snippet without imports with no modules", () => {
    const plan = planFast({ code: "export default 1 + 1;", filename: "snippet.ts" });
    expect(plan?.modules).toEqual({ entry: "snippet.ts", sources: {}, links: {} });
  });

  it("strips each module's types and links relative imports, leaving type-only imports out", () => {
    const plan = planFast({ code: 'import { add } from "mcp/math/index.ts";\nexport default add(2);', filename: "snippet.ts", modules });
    expect(Object.keys(plan?.modules.sources ?? {}).sort()).toEqual(["mcp/math/base.ts", "mcp/math/index.ts"]);
    expect(plan?.modules.sources["mcp/math/base.ts"]).toBe("export const base = 40;");
    expect(plan?.modules.links).toEqual({
      [fastPath.linkKey("snippet.ts", "mcp/math/index.ts")]: "mcp/math/index.ts",
      [fastPath.linkKey("mcp/math/index.ts", "./base.ts")]: "mcp/math/base.ts",
    });
  });

  it("compiles a module once, however many snippets import it, and again when its source changes", () => {
    const source = `export const once = ${Math.random()};`;
    const resolve = (specifier: string) => (specifier === "mcp/once.ts" ? source : undefined);
    const before = fastPath.modulesCompiled;
    for (let i = 0; i < 3; i++)
      planFast({ code: `import { once } from "mcp/once.ts";\nexport default once + ${i};`, filename: "snippet.ts", modules: resolve });
    expect(fastPath.modulesCompiled - before).toBe(1);
    planFast({ code: 'import { once } from "mcp/once.ts";', filename: "snippet.ts", modules: () => `${source}\n` });
    expect(fastPath.modulesCompiled - before).toBe(2);
  });

  it("bounds the characters its cache holds, not only its count of modules", () => {
    const big = (n: number) => `export const s${n} = "${String(n).padEnd(1024 * 1024, "x")}";`;
    const plan = (n: number) => planFast({ code: `import { s${n} } from "mcp/big${n}.ts";`, filename: "snippet.ts", modules: () => big(n) });
    const before = fastPath.modulesCompiled;
    for (let n = 0; n < 40; n++) plan(n);
    expect(fastPath.modulesCompiled - before).toBe(40);
    plan(39);
    expect(fastPath.modulesCompiled - before).toBe(40);
    // 40 MiB of sources and their stripped code is past the bound: the first ones were evicted.
    plan(0);
    expect(fastPath.modulesCompiled - before).toBe(41);
  });

  it("builds a module's source map only when asked, with its lines", () => {
    const plan = planFast({ code: 'import { add } from "mcp/math/index.ts";', filename: "snippet.ts", modules });
    const map = JSON.parse(plan?.mapOf("mcp/math/index.ts") ?? "{}") as { sources: string[] };
    expect(map.sources).toEqual(["mcp/math/index.ts"]);
    expect(plan?.mapOf("mcp/nope.ts")).toBeUndefined();
  });

  it("leaves to esbuild what it cannot vouch for", () => {
    const esbuilds = [
      'import { x } from "mcp/unknown.ts";',
      'import fs from "node:fs";',
      'const m = await import("mcp/math/index.ts");',
      "const m = await import(name);",
      "export default import.meta;",
      'const fs = require("fs");',
      "const = ;\n`unterminated",
      `export default ${"<T>(".repeat(20)}1${")".repeat(20)};`,
      `export default "${"x".repeat(20_000)}";`,
    ];
    for (const code of esbuilds) expect(planFast({ code, filename: "snippet.ts", modules }), code).toBeUndefined();
  });

  it("leaves to esbuild an import or re-export the lexer did not see, and a line end QuickJS does not count", () => {
    const esbuilds = [
      'let a: any = 4;\nconst r = a! / 2; import fs from "node:fs"; const z = a! / 2;',
      'let a: any = 4;\nconst r = a! / 2; export { type T } from "node:fs"; const z = a! / 2;',
      '{ import fs from "node:fs"; }',
      '// import fs from "node:fs";',
      'const s = "import";',
      "export {};",
      'import type A, { b } from "mcp/math/base.ts";',
      "export default 1;\u2028",
      "export default 1;\r",
    ];
    for (const code of esbuilds) expect(planFast({ code, filename: "snippet.ts", modules }), code).toBeUndefined();
    const fast = [
      "const ok = 1;\r\nexport { ok };\r\nexport default ok;",
      'import type A from "mcp/none.ts";\nexport type { B } from "mcp/none.ts";',
      "export const important = 1;",
    ];
    for (const code of fast) expect(planFast({ code, filename: "snippet.ts", modules }), code).toBeDefined();
  });

  it("never strips on the caller's thread a module whose `<` could make sucrase exponential or quadratic (a saved skill is model-written)", () => {
    const costly = [
      // Nested generic arrows: each level doubles sucrase's work (17 levels take it about a second).
      `export const f = ${"<T,>(x = ".repeat(17)}1${") => 1".repeat(17)};`,
      `export const f = ${"<any>(".repeat(17)}1${")".repeat(17)};`,
      `export async function f(x: any) { return ${"await <any>(".repeat(17)}x${")".repeat(17)}; }`,
      `export const f = (a: any, b: any) => [${"a < b, ".repeat(3_000)}1];`,
      `export const f = (a: any, b: any) => ${"<T,>(x = ".repeat(4)}[${"a < b, ".repeat(50)}${"1, ".repeat(20_000)}]${") => 1".repeat(4)};`,
    ];
    for (const source of costly) {
      const before = fastPath.modulesCompiled;
      const plan = planFast({
        code: 'import { f } from "mcp/costly.ts";',
        filename: "snippet.ts",
        modules: (path) => (path === "mcp/costly.ts" ? source : undefined),
      });
      expect(plan, source.slice(0, 40)).toBeUndefined();
      expect(fastPath.modulesCompiled - before).toBe(0);
    }
    const wrapper = [
      "/** Lists <b>issues</b>: a < b when c. */",
      "export type Out = Array<Record<string, Promise<number>>>;",
      "export async function f(input: Map<string, Array<number>> = new Map()): Promise<Out> {",
      "  return (input.size < 2 ? [] : [input]) as Array<any>;",
      "}",
    ].join("\n");
    expect(
      planFast({ code: 'import { f } from "mcp/wrapper.ts";', filename: "snippet.ts", modules: (path) => (path === "mcp/wrapper.ts" ? wrapper : undefined) }),
    ).toBeDefined();
  });

  it("leaves a snippet named like one of its modules, or like one of the engine's scripts, to esbuild", () => {
    expect(planFast({ code: 'import { base } from "mcp/math/base.ts";', filename: "mcp/math/base.ts", modules })).toBeUndefined();
    expect(planFast({ code: "export default 1;", filename: "prelude.js" })).toBeUndefined();
    expect(planFast({ code: "export default 1;", filename: "task.ts" })).toBeDefined();
  });
});
