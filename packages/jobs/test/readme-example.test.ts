import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const root = join(import.meta.dirname, "..");

// Running it needs @codemux/server: packages/server/test/jobs/readme-example.test.ts runs it.
describe("README example", () => {
  it("is the file examples/background.mjs, with the output the README shows", () => {
    const { readme, file, output } = readmeExample(root, "examples/background.mjs");
    expect(readme).toBe(file);
    expect(output?.trim()).toBe("completed 42");
  });
});
