import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("README example", () => {
  const home = process.env.CODEMUX_HOME;
  afterAll(() => {
    vi.restoreAllMocks();
    if (home === undefined) delete process.env.CODEMUX_HOME;
    else process.env.CODEMUX_HOME = home;
  });

  it("is the code of examples/start.ts", () => {
    const { readme, file } = readmeExample(packageDir, "examples/start.ts");
    expect(readme).toBe(file);
  });

  it("starts codemux on the reference filesystem server from a config file, and searches its catalog", async () => {
    process.env.CODEMUX_HOME = await mkdtemp(join(tmpdir(), "codemux-runtime-home-"));
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    await import("../examples/start");
    const [status, found] = log.mock.calls.map(([value]) => value);
    expect(status).toEqual(["fs: ready"]);
    expect(String(found)).toContain("fs__list_directory");
  }, 60_000);
});
