import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { readmeExample } from "../../../../scripts/lib/readme-examples.mjs";

const jobsRoot = join(import.meta.dirname, "../../../jobs");
const serverRoot = join(import.meta.dirname, "../..");

describe("the jobs README example", () => {
  it("prints the README's output when run", async () => {
    const { output } = readmeExample(jobsRoot, "examples/background.mjs");
    // Run from a copy inside this package, its imports resolve here (jobs itself builds and tests without the server).
    const dir = await mkdtemp(join(serverRoot, ".example-run-"));
    try {
      await copyFile(join(jobsRoot, "examples/background.mjs"), join(dir, "background.mjs"));
      const { stdout } = await promisify(execFile)(process.execPath, [join(dir, "background.mjs")], { timeout: 60_000 });
      expect(stdout.trim()).toBe(output?.trim());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
