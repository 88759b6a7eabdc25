// `pnpm publish -r --dry-run` publishes exactly the public packages, each with its built files
// and no workspace ranges left. Needs a build first; run with `pnpm test:packs`.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { promisify } from "node:util";
import { pnpm, root, workspacePackages } from "../lib/workspace.mjs";

test("pnpm publish -r --dry-run publishes every public package and no private one", async () => {
  // --no-git-checks: the check of a clean tree on main is for the real publish, not for a test run in a work tree.
  const [command, args] = pnpm(["publish", "-r", "--dry-run", "--no-git-checks"]);
  const { stdout, stderr } = await promisify(execFile)(command, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const output = `${stdout}\n${stderr}`;
  const published = [...output.matchAll(/^\+ (\S+)@(\S+)$/gm)].map((match) => match[1]).sort();
  const expected = workspacePackages()
    .map((pkg) => pkg.name)
    .sort();
  assert.deepEqual(published, expected);
  for (const pkg of workspacePackages({ includePrivate: true }).filter((p) => p.manifest.private)) {
    assert.ok(!published.includes(pkg.name), `${pkg.name} is private and must not be published.`);
  }
  assert.doesNotMatch(output, /workspace:/);
});
