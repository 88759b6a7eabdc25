import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Store } from "@codemux/core";
import { FileStore, MemoryStore } from "../src/index";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const kinds: Array<[string, (now: () => number) => Promise<Store>]> = [
  ["MemoryStore", async (now) => new MemoryStore({ now })],
  [
    "FileStore",
    async (now) => {
      const dir = await mkdtemp(join(tmpdir(), "codemux-store-"));
      dirs.push(dir);
      return new FileStore({ dir, now });
    },
  ],
];

describe.each(kinds)("%s", (_name, make) => {
  it("reads back what it wrote, hides an owner's entries from others, and forgets expired ones", async () => {
    let now = 0;
    const store = await make(() => now);
    await store.write("shared", "for everyone");
    await store.write("mine", "secret", { owner: "a", ttlMs: 100 });
    expect(await store.read("shared")).toBe("for everyone");
    expect(await store.read("mine", { owner: "a" })).toBe("secret");
    expect(await store.read("mine", { owner: "b" })).toBeUndefined();
    expect(await store.read("mine")).toBeUndefined();
    expect((await store.list({ owner: "b" })).map((e) => e.key)).toEqual(["shared"]);
    now = 100;
    expect(await store.read("mine", { owner: "a" })).toBeUndefined();
    expect((await store.list()).map((e) => e.key)).toEqual(["shared"]);
  });

  it("refuses keys that are paths", async () => {
    const store = await make(Date.now);
    for (const key of ["../x", "/etc/passwd", "a/b", ".hidden", ""]) await expect(store.write(key, "x")).rejects.toThrow(/names, not paths/);
  });
});

describe("FileStore", () => {
  it("writes atomically (no temporary file left) and keeps plain entries for the next process", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-store-"));
    dirs.push(dir);
    await new FileStore({ dir }).write("catalog.json", "{}");
    expect(await readdir(dir)).toEqual(["catalog.json"]);
    expect(await new FileStore({ dir }).read("catalog.json")).toBe("{}");
  });
});
