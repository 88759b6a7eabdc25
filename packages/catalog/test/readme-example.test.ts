import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("README example", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is the code of examples/search.ts", () => {
    const { readme, file } = readmeExample(packageDir, "examples/search.ts");
    expect(readme).toBe(file);
  });

  it("runs: a paraphrase finds the tool, and a name resolves to its function, module and signature", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    await import("../examples/search");
    expect(log.mock.calls).toEqual([
      ["github__create_issue"],
      ["readTextFile", "mcp/servers/fs/readTextFile", "readTextFile({ path: string, head?: number })"],
    ]);
  });
});
