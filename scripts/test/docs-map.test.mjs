// scripts/check-docs-map.mjs: docs/README.md reaches every document in docs/, and an unmapped
// document or a broken link fails it.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { docsMapProblems } from "../lib/docs-map.mjs";
import { root } from "../lib/workspace.mjs";

const work = mkdtempSync(join(tmpdir(), "codemux-docs-map-"));
after(() => rmSync(work, { recursive: true, force: true }));

function tree(files) {
  const dir = mkdtempSync(join(work, "tree-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("docs map", () => {
  test("the workspace's docs/README.md reaches every document in docs/", () => {
    assert.deepEqual(docsMapProblems(root), []);
  });

  test("documents reached through a linked page or a folder's README pass; anchors and web links are not files", () => {
    const dir = tree({
      "README.md": "# root\n",
      "docs/README.md": "[a](a.md#part) [perf](perf/) [web](https://example.com/x.md) [top](#top) [root](../README.md)\n",
      "docs/a.md": '[b](design/b.md "B")\n',
      "docs/design/b.md": "# b\n",
      "docs/perf/README.md": "[c](c.md)\n",
      "docs/perf/c.md": "# c\n",
    });
    assert.deepEqual(docsMapProblems(dir), []);
  });

  test("a document nothing links and a link to a missing file fail, with the file and the line", () => {
    const dir = tree({
      "docs/README.md": "# map\n\n[a](a.md) [gone](gone.md)\n[design](design/)\n",
      "docs/a.md": "# a\n",
      "docs/design/b.md": "# b\n",
      "docs/orphan.md": "[a](a.md)\n",
    });
    assert.deepEqual(docsMapProblems(dir), [
      "docs/README.md:3: links to docs/gone.md, which does not exist.",
      "docs/design/b.md is not reached from docs/README.md: link it from the map (or from a page the map links).",
      "docs/orphan.md is not reached from docs/README.md: link it from the map (or from a page the map links).",
    ]);
  });

  test("without docs/README.md the map itself is missing", () => {
    assert.deepEqual(docsMapProblems(tree({ "docs/a.md": "# a\n" })), ["docs/README.md is missing: it is the map of docs/."]);
  });
});
