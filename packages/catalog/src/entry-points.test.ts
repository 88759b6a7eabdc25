import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

/** The Node built-ins an entry loads that a fresh process had not, seen from that process. */
function builtinsLoadedBy(file: string): string[] {
  const script = `const before = new Set(process.moduleLoadList);
await import(${JSON.stringify(dist(file))});
console.log(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m) && /^NativeModule (child_process|fs\\/promises|worker_threads|net)$/.test(m))));`;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).trim()) as string[];
}

describe("entry points", () => {
  it("the root entry loads no file or process APIs: the catalog is pure computation", () => {
    expect(builtinsLoadedBy("index.js")).toEqual([]);
  });
});
