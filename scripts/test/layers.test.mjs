// scripts/check-layers.mjs: the layer direction of SPEC.md §1 holds in the tree, and an upward import fails it.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { layerViolations } from "../lib/layers.mjs";
import { root } from "../lib/workspace.mjs";

const work = mkdtempSync(join(tmpdir(), "codemux-layers-"));
after(() => rmSync(work, { recursive: true, force: true }));

function tree(files) {
  const dir = mkdtempSync(join(work, "tree-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("layers", () => {
  test("the workspace's packages import only the packages below them", () => {
    assert.deepEqual(layerViolations(root), []);
  });

  test("an upward import, a type import among them, fails with the file, the line and what is allowed", () => {
    const dir = tree({
      "packages/core/package.json": "{}",
      "packages/core/src/index.ts": 'export const a = 1;\nimport type { Pool } from "@codemux/pool";\n',
      "packages/jobs/package.json": "{}",
      "packages/jobs/src/run.ts": 'import { x } from "@codemux/core";\nconst s = await import("@codemux/server/sub");\n',
      "packages/jobs/src/run.test.ts": 'import { Codemux } from "@codemux/server";\n',
      "packages/pool/package.json": "{}",
      "packages/pool/src/ok.ts": 'import { c } from "@codemux/catalog";\nimport "@codemux/pool";\n',
    });
    assert.deepEqual(layerViolations(dir), [
      "packages/core/src/index.ts:2: @codemux/core imports @codemux/pool, against the layers of SPEC.md §1 (it may import no other package).",
      "packages/jobs/src/run.ts:2: @codemux/jobs imports @codemux/server, against the layers of SPEC.md §1 (it may import @codemux/core).",
    ]);
  });

  test("a package the table does not know is reported, so a new package states its layer", () => {
    const dir = tree({ "packages/newcomer/package.json": "{}", "packages/newcomer/src/index.ts": "export {};\n" });
    assert.match(layerViolations(dir).join("\n"), /packages\/newcomer: not in scripts\/lib\/layers\.mjs/);
  });
});
