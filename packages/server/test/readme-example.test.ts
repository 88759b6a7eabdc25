import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("README example", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is the code of examples/serve.ts", () => {
    const { readme, file } = readmeExample(packageDir, "examples/serve.ts");
    expect(readme).toBe(file);
  });

  it("runs against the reference filesystem server: search, a snippet, and a client session", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    await import("../examples/serve");
    const [search, count, tools] = log.mock.calls.map(([value]) => value);
    expect(search).toMatch(/fs__read_text_file/);
    // The snippet counts the entries of the folder the server serves (the current one).
    expect(count).toBe(readdirSync(".").length);
    expect(tools).toEqual(expect.arrayContaining(["search_tools", "execute_code", "call_tool"]));
  });
});
