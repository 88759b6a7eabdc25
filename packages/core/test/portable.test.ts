import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

describe("@codemux/core as built", () => {
  it("imports nothing: no Node built-in, no SDK, no other package (contracts only, usable anywhere)", () => {
    const built = readFileSync(new URL("../dist/index.js", import.meta.url), "utf8");
    expect(built.match(/^\s*import\s.*$|\brequire\(|\bimport\(/gm) ?? []).toEqual([]);
    expect(JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).dependencies).toBeUndefined();
  });
});
