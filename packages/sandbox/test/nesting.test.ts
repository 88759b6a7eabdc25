import { describe, expect, it } from "vitest";
import { Sandbox } from "@codemux/sandbox";

describe("deep nesting is refused before esbuild sees it", () => {
  const sandbox = new Sandbox({ workers: 1 });

  it.each([
    ["brackets", `export default ${"[".repeat(5_000)}${"]".repeat(5_000)};`, /nests brackets 5000 deep/],
    ["prefix operators", `export default ${"!\n".repeat(250_000)}1;`, /chains 250000 prefix operators/],
    ["an arrow chain", `export default ${"a=>\n".repeat(250_000)}1;`, /250000 arrow functions/],
  ])("%s: a clear syntax error at once, and the sandbox goes on", async (_name, code, message) => {
    const run = await sandbox.execute({ code });
    expect(run.ok).toBe(false);
    expect(run.error).toMatchObject({ kind: "syntax" });
    expect(run.error?.message).toMatch(message);
    expect((await sandbox.execute({ code: "export default 1 + 1" })).result).toBe(2);
  });

  it("leaves ordinary nesting, and brackets inside strings and comments, alone", async () => {
    const code = `// ${"(".repeat(2_000)}\nconst s = "${"[".repeat(2_000)}";\nexport default [[[{ a: (1 + 2) }]]].length + s.length;`;
    expect((await sandbox.execute({ code })).result).toBe(2_001);
  });
});
