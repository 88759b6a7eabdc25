import { describe, expect, it } from "vitest";
import { bundleSnippet } from "./bundle.js";

const modules: Record<string, string> = {
  "mcp/math/index.ts": 'import { base } from "./base.ts";\nexport const add = (a: number): number => a + base;',
  "mcp/math/base.ts": "export const base: number = 40;",
};
const resolve = (specifier: string) => modules[specifier];

describe("bundleSnippet", () => {
  it("strips types and inlines virtual modules, relative imports included", async () => {
    const bundle = await bundleSnippet({
      code: 'import { add } from "mcp/math/index.ts";\nexport default add(2) as number;',
      filename: "snippet.ts",
      modules: resolve,
    });
    expect(bundle.ok).toBe(true);
    if (!bundle.ok) return;
    expect(bundle.code).toContain("var base=40;");
    expect(bundle.code).not.toContain(": number");
    expect(JSON.parse(bundle.map).sources).toEqual(["codemux-sandbox:mcp/math/base.ts", "codemux-sandbox:mcp/math/index.ts", "snippet.ts"]);
  });

  it("reports an import of a name the module does not export as an import error, in the module's own name", async () => {
    const bundle = await bundleSnippet({ code: 'import { nope } from "mcp/math/index.ts";\nexport default nope;', filename: "snippet.ts", modules: resolve });
    expect(bundle).toMatchObject({ ok: false, error: { kind: "import", line: 1, column: 10 } });
    expect(bundle.ok || bundle.error.message).toBe('snippet.ts:1:10: No matching export in "mcp/math/index.ts" for import "nope"');
  });

  it("reports a syntax error at its line and column", async () => {
    const bundle = await bundleSnippet({ code: "const a = 1;\nconst b = ;\n", filename: "snippet.ts" });
    expect(bundle).toMatchObject({ ok: false, error: { kind: "syntax", line: 2, column: 11 } });
    expect(bundle.ok || bundle.error.message).toMatch(/^snippet\.ts:2:11: /);
  });

  it("refuses a missing module at the line of its import", async () => {
    const bundle = await bundleSnippet({ code: '\n\nimport { x } from "mcp/nope";\nexport default x;', filename: "task.ts", modules: resolve });
    expect(bundle).toMatchObject({ ok: false, error: { kind: "import", line: 3 } });
    expect(bundle.ok || bundle.error.message).toMatch(/^task\.ts:3:\d+: Cannot import "mcp\/nope"/);
  });

  it("names the modules spelled close to a missing one", async () => {
    const suggest = (specifier: string) => (specifier === "mcp/math/indx.ts" ? ["mcp/math/index.ts"] : []);
    const bundle = await bundleSnippet({
      code: 'import { add } from "mcp/math/indx.ts";\nexport default add(1);',
      filename: "snippet.ts",
      modules: resolve,
      suggest,
    });
    expect(bundle.ok || bundle.error.message).toBe(
      'snippet.ts:1:21: Cannot import "mcp/math/indx.ts": no such module is available to the sandbox (did you mean "mcp/math/index.ts"?).',
    );
  });

  it("refuses dynamic import() even of a module that exists", async () => {
    const bundle = await bundleSnippet({ code: 'const m = await import("mcp/math/index.ts");\nexport default m;', filename: "snippet.ts", modules: resolve });
    expect(bundle).toMatchObject({ ok: false, error: { kind: "import", line: 1 } });
  });

  it("refuses require() of anything", async () => {
    const bundle = await bundleSnippet({ code: 'const fs = require("fs");\nexport default fs;', filename: "snippet.ts", modules: resolve });
    expect(bundle).toMatchObject({ ok: false, error: { kind: "import", line: 1 } });
  });

  it("reads nothing from disk, even a file that exists", async () => {
    const bundle = await bundleSnippet({ code: 'import pkg from "./package.json";\nexport default pkg;', filename: "snippet.ts" });
    expect(bundle).toMatchObject({ ok: false, error: { kind: "import" } });
  });
});
