import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const root = join(import.meta.dirname, "..");

describe("README example", () => {
  it("is the file examples/background.mjs, and running it prints the README's output", async () => {
    const { readme, file, output } = readmeExample(root, "examples/background.mjs");
    expect(readme).toBe(file);
    expect(output?.trim()).toBe("completed 42");
    const { stdout } = await promisify(execFile)(process.execPath, ["examples/background.mjs"], { cwd: root, timeout: 60_000 });
    expect(stdout.trim()).toBe("completed 42");
  });
});
