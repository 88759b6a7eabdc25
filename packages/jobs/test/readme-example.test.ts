import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

describe("README example", () => {
  it("is the file examples/background.mjs, and running it prints the README's output", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const file = readFileSync(join(root, "examples/background.mjs"), "utf8");
    expect(readme).toContain(`<!-- example: examples/background.mjs -->\n\`\`\`ts\n${file}\`\`\``);
    const { stdout } = await promisify(execFile)(process.execPath, ["examples/background.mjs"], { cwd: root, timeout: 60_000 });
    expect(stdout.trim()).toBe("completed 42");
  });
});
