import { haveProgram } from "@codemux/test-servers";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const root = join(import.meta.dirname, "..");

describe.skipIf(!haveProgram("redis-server", "redis-server"))("README example", () => {
  it("is the file examples/two-instances.mjs, and running it prints the README's output", async () => {
    const { readme, file, output } = readmeExample(root, "examples/two-instances.mjs");
    expect(readme).toBe(file);
    const { stdout } = await promisify(execFile)(process.execPath, ["examples/two-instances.mjs"], { cwd: root, timeout: 60_000 });
    expect(stdout.trim()).toBe(output?.trim());
  });
});
