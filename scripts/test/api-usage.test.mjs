// scripts/api-usage.mjs: it reads every name of each API report, and every way a module imports names.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { importsOf, reportedNames } from "../lib/api-usage.mjs";
import { root, workspacePackages } from "../lib/workspace.mjs";

describe("api usage", () => {
  test("each report's entry points yield as many names as their headings count", () => {
    const libraries = workspacePackages().filter((p) => p.dir.startsWith(join(root, "packages")));
    assert.ok(libraries.length > 0);
    for (const pkg of libraries) {
      const text = readFileSync(join(pkg.dir, "etc", "api.md"), "utf8");
      const counted = Object.fromEntries([...text.matchAll(/^## `([^`]+)` \((\d+) names\)/gm)].map((m) => [m[1], Number(m[2])]));
      const read = Object.fromEntries([...reportedNames(pkg)].map(([entry, names]) => [entry, names.size]));
      assert.deepEqual(read, counted, pkg.name);
    }
  });

  test("named, type, renamed, re-exported and awaited dynamic imports are read; other packages are not", () => {
    const text = [
      'import { a, type B, c as d } from "@codemux/pool";',
      'import type { E } from "@codemux/server/stdio";',
      'import def, { f } from "@codemux/core";',
      'export { g } from "@codemux/hooks";',
      'const { h, i: j } = await import("@codemux/jobs");',
      'import {\n  k,\n  l,\n} from "@codemux/http";',
      'import { z } from "zod";',
    ].join("\n");
    assert.deepEqual(
      importsOf(text).map(({ specifier, name }) => `${specifier} ${name}`),
      [
        "@codemux/pool a",
        "@codemux/pool B",
        "@codemux/pool c",
        "@codemux/server/stdio E",
        "@codemux/core f",
        "@codemux/hooks g",
        "@codemux/http k",
        "@codemux/http l",
        "@codemux/jobs h",
        "@codemux/jobs i",
      ],
    );
  });
});
