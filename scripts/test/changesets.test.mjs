// .changeset/*.md: each one parses as `changeset version` reads it (front matter naming workspace packages and a bump), so a
// formatter that turns the front matter into a heading, as biome's markdown formatter did, fails here and not at release.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { root, workspacePackages } from "../lib/workspace.mjs";

const require = createRequire(import.meta.url);
const parse = createRequire(require.resolve("@changesets/cli/package.json"))("@changesets/parse").default;

test("every changeset names workspace packages with a bump and has a summary", () => {
  const names = new Set(workspacePackages().map((p) => p.name));
  const dir = join(root, ".changeset");
  const files = readdirSync(dir).filter((f) => f.endsWith(".md") && f !== "README.md");
  for (const file of files) {
    const { releases, summary } = parse(readFileSync(join(dir, file), "utf8"));
    assert.ok(releases.length > 0, `${file}: no package named`);
    for (const { name, type } of releases) {
      assert.ok(names.has(name), `${file}: ${name} is not a workspace package`);
      assert.ok(["major", "minor", "patch"].includes(type), `${file}: ${type}`);
    }
    assert.ok(summary.length > 20, `${file}: no summary`);
  }
});
