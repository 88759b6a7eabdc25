import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const tsup = join(dirname(require.resolve("tsup/package.json")), "dist/cli-default.js");
let out: string;

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), "codemux-cli-build-"));
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe("the CLI's build", () => {
  it("bundles the libraries without a warning (a newcomer's first build is quiet)", async () => {
    // Into a folder of its own: the other tests run dist/ meanwhile.
    const { stdout, stderr } = await run(process.execPath, [tsup, "--out-dir", out], { cwd: resolve(import.meta.dirname, ".."), maxBuffer: 16 * 1024 * 1024 });
    expect(`${stdout}${stderr}`).not.toMatch(/WARN|warning/i);
    expect(await readdir(out)).toEqual(expect.arrayContaining(["index.js", "worker.js"]));
  }, 120_000);
});
