import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("README example", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is the code of examples/generate.ts", () => {
    const { readme, file } = readmeExample(packageDir, "examples/generate.ts");
    expect(readme).toBe(file);
  });

  it("runs: lists the modules, prints the module the README shows, writes the tree", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    await import("../examples/generate");
    const [list, module, written] = log.mock.calls.map(([value]) => value as unknown);
    expect(list).toEqual(["mcp/servers/fs", "mcp/servers/fs/readTextFile"]);
    expect(String(module).trimEnd()).toBe(readmeExample(packageDir, "examples/generate.ts").output?.trimEnd());
    const [, files, out] = /^(\d+) files written to (.+)$/.exec(String(written)) ?? [];
    expect(Number(files)).toBeGreaterThan(3);
    expect(existsSync(join(String(out), "servers/fs/readTextFile.ts"))).toBe(true);
    rmSync(String(out), { recursive: true, force: true });
  });
});
