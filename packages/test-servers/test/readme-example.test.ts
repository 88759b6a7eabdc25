import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("README example", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is the code of examples/counter.ts", () => {
    const { readme, file } = readmeExample(packageDir, "examples/counter.ts");
    expect(readme).toBe(file);
  });

  it("runs: the misbehaving server answers a counter call over stdio", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    await import("../examples/counter");
    const [result] = log.mock.calls.map(([value]) => value as { content: Array<{ type: string; text: string }> });
    expect(result?.content[0]).toMatchObject({ type: "text" });
    expect(result?.content[0]?.text).toMatch(/\d/);
  });
});
