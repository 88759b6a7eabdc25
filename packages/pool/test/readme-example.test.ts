import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("README example", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is the code of examples/call.ts", () => {
    const { readme, file } = readmeExample(packageDir, "examples/call.ts");
    expect(readme).toBe(file);
  });

  it("runs against the reference everything server: states, tool counts, progress, the result", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    await import("../examples/call");
    const [[server, count], [content]] = log.mock.calls as [[string, number], [Array<{ type: string; text?: string }>]];
    expect(server).toBe("demo");
    expect(count).toBeGreaterThan(5);
    expect(content[0]?.text).toMatch(/Long running operation completed/);
    const stderr = error.mock.calls.map((args) => args.join(" "));
    expect(stderr).toContain("demo ready ");
    expect(stderr).toContain("progress 1/2");
  });
});
