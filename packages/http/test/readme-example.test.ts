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

  it("runs against the reference filesystem server: an MCP client over HTTP, then REST search and call", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    await import("../examples/serve");
    const [tools, best, status] = log.mock.calls.map(([value]) => value);
    expect(tools).toEqual(expect.arrayContaining(["search_tools", "execute_code", "call_tool"]));
    expect(best).toBe("fs__list_directory");
    expect(status).toBe(200);
  });
});
