import { link, mkdtemp, rm, writeFile } from "node:fs/promises";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reloadOnChange } from "./file-watch";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-file-watch-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("reloadOnChange", () => {
  it("applies a change made the moment it started, seen only by polling (the baseline is taken at start, not later)", async () => {
    // Written through a hard link in another folder: no event reaches the folder watched, only the poll can see it.
    const elsewhere = await mkdtemp(join(tmpdir(), "codemux-file-watch-elsewhere-"));
    const original = join(elsewhere, "file.txt");
    const watched = join(dir, "linked.txt");
    await writeFile(original, "first");
    await link(original, watched);
    const applied: string[] = [];
    const reloader = reloadOnChange({ file: watched, debounceMs: 10, pollMs: 20, onError: () => undefined, apply: async (text) => (applied.push(text), true) });
    writeFileSync(original, "second, longer");
    try {
      await expect.poll(() => applied, { timeout: 5_000 }).toEqual(["second, longer"]);
    } finally {
      reloader.close();
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});
