import { type ExecuteRequest, Sandbox } from "@codemux/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import { keptPath } from "./kept-path";

// The fast path is an optimization with an off switch: every snippet answers the same with it on or off.
const files: Record<string, string> = {
  "mcp/math.ts": "export interface Pair { a: number; b: number }\nexport const add = ({ a, b }: Pair): number => a + b;",
  "mcp/tools.ts":
    'declare const __call: unknown;\nexport async function echo(value: unknown): Promise<unknown> {\n  return value;\n}\nexport const name: string = "tools";',
};
const modules = (specifier: string) => files[specifier];

const on = new Sandbox({ workers: 1, fastPath: true });
const off = new Sandbox({ workers: 1, fastPath: false });
afterAll(() => Promise.all([on.close(), off.close()]));

const snippets = [
  'import { add, type Pair } from "mcp/math.ts";\nconst p: Pair = { a: 2, b: 3 };\nconsole.log("sum", add(p));\nexport default add(p);',
  'import { echo, name } from "mcp/tools.ts";\nexport default await Promise.all([echo(1), echo(name)]);',
  "const values: number[] = [1, 2, 3];\nconsole.error('warn');\nexport default values.map((v) => v * 2);",
  "const x: number = 1;\n\nthrow new RangeError(`bad ${x}`);",
  'import { nope } from "mcp/math.ts";\nexport default nope;',
  'import { a } from "mcp/missing.ts";\nexport default a;',
  "export default (1 +;",
  "await new Promise((resolve) => setTimeout(resolve, 1));\nexport default { done: true };",
];

async function run(sandbox: Sandbox, request: ExecuteRequest) {
  const kept: string[] = [];
  const result = await sandbox.execute({ modules, timeoutMs: 10_000, ...request, onBundle: (bundle) => kept.push(bundle.bundle) });
  const { durationMs: _, ...answer } = result;
  return { answer, path: keptPath(kept) };
}

describe("the sandbox's fast path switch", () => {
  it("answers every snippet the same on both paths: result, output, calls and errors with their positions", async () => {
    for (const code of snippets) {
      const fast = await run(on, { code });
      const bundled = await run(off, { code });
      expect(bundled.path, code).not.toBe("fast");
      expect(fast.answer, code).toEqual(bundled.answer);
    }
    // The fast path did take the snippets it can vouch for (else the comparison above compares esbuild with itself).
    expect((await run(on, { code: snippets[0] as string })).path).toBe("fast");
  });

  it("is off with CODEMUX_SANDBOX_FAST_PATH=0, false or off when no fastPath option is given", async () => {
    const previous = process.env.CODEMUX_SANDBOX_FAST_PATH;
    try {
      for (const value of ["0", "false", "OFF", "1"]) {
        process.env.CODEMUX_SANDBOX_FAST_PATH = value;
        const sandbox = new Sandbox({ workers: 1 });
        try {
          expect((await run(sandbox, { code: snippets[0] as string })).path, value).toBe(value === "1" ? "fast" : "esbuild");
        } finally {
          await sandbox.close();
        }
      }
    } finally {
      if (previous === undefined) delete process.env.CODEMUX_SANDBOX_FAST_PATH;
      else process.env.CODEMUX_SANDBOX_FAST_PATH = previous;
    }
  });
});
