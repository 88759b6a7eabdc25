import { Sandbox, SandboxOptionsError } from "@codemux/sandbox";
import { afterAll, describe, expect, it } from "vitest";

const LIB =
  "\nexport function fail(): never {\n  throw new RangeError('from lib');\n}\nexport const seen: string = typeof (globalThis as { early?: number }).early;\n";
const files: Record<string, string> = {
  "mcp/lib.ts": LIB,
  "mcp/setter.ts": "(globalThis as { early?: number }).early = 1;\nexport {};",
};
const modules = (specifier: string) => files[specifier];
// Preloaded modules serve the fast path: pinned on, whatever CODEMUX_SANDBOX_FAST_PATH says.
const sandbox = new Sandbox({ workers: 1, fastPath: true, preloadModules: { "mcp/lib.ts": LIB } });
const plain = new Sandbox({ workers: 1 });
afterAll(() => Promise.all([sandbox.close(), plain.close()]));

describe("preloadModules", () => {
  it("builds the module into each run's engine before the run, before the snippet's other imports", async () => {
    const code = 'import "mcp/setter.ts";\nimport { seen } from "mcp/lib.ts";\nexport default seen;';
    // Imports are evaluated in order; a preloaded module was evaluated earlier, before the run.
    expect(await plain.execute({ code, modules })).toMatchObject({ ok: true, result: "number" });
    for (let i = 0; i < 3; i++) expect(await sandbox.execute({ code, modules })).toMatchObject({ ok: true, result: "undefined" });
  });

  it("maps an error thrown inside a preloaded module as for any other module", async () => {
    const code = "import { fail } from 'mcp/lib.ts'; await 0;\n\nconst typed: number = 1; fail();";
    const preloaded = await sandbox.execute({ code, filename: "task.ts", modules });
    expect(preloaded.error?.message).toBe("task.ts:3:30: RangeError: from lib (thrown at mcp/lib.ts:3:23)");
    expect(preloaded.error?.message).toBe((await plain.execute({ code, filename: "task.ts", modules })).error?.message);
  });

  it("runs a snippet whose resolver gives another source for the path with that source", async () => {
    const other = (specifier: string) => (specifier === "mcp/lib.ts" ? "export const seen = 'mine';" : undefined);
    const code = 'import { seen } from "mcp/lib.ts";\nexport default seen;';
    expect(await sandbox.execute({ code, modules: other })).toMatchObject({ ok: true, result: "mine" });
    expect(await sandbox.execute({ code, modules })).toMatchObject({ ok: true, result: "undefined" });
  });

  it("refuses in the constructor a module that imports, a path no import resolves to, or a source that is not text", () => {
    const bad: Array<Record<string, unknown>> = [
      { "mcp/a.ts": 'import { x } from "./b.ts";\nexport const y = x;' },
      { "../a.ts": "export const a = 1;" },
      { "/abs.ts": "export const a = 1;" },
      { "mcp//a.ts": "export const a = 1;" },
      { "mcp/a.ts": 42 },
    ];
    for (const preloadModules of bad) {
      expect(() => new Sandbox({ workers: 1, preloadModules: preloadModules as Record<string, string> })).toThrow(SandboxOptionsError);
    }
    // Type-only imports are dropped with the types.
    const typed = new Sandbox({ workers: 1, preloadModules: { "mcp/a.ts": 'import type { X } from "./x.ts";\nexport const a: X = 1;' } });
    return typed.close();
  });
});
