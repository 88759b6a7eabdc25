import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { CatalogCache } from "../src/catalog-cache";
import { MemoryStore } from "../src/index";
import { config, connect, misbehaving, type Harness } from "./helpers";

const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

/** A config of two lazy servers, and a cache of theirs saved `ageMs` ago that knows only `echo`. */
async function withCache(ageMs: number, catalogCacheTtlMs?: number): Promise<{ h: Harness; tag: string }> {
  const tag = randomUUID();
  const cfg = config({ a: { ...misbehaving(`--tag=${tag}-a`), lazy: true }, b: { ...misbehaving(`--tag=${tag}-b`), lazy: true } });
  const cacheStore = new MemoryStore();
  const echo = { name: "echo", inputSchema: { type: "object" as const, properties: { text: { type: "string" } } } };
  await new CatalogCache(cacheStore, cfg).save(new Map(cfg.servers.map((s) => [s.name, [echo]])), Date.now() - ageMs);
  const h = await connect({ config: cfg, cacheStore, ...(catalogCacheTtlMs === undefined ? {} : { catalogCacheTtlMs }) });
  harnesses.push(h);
  await h.core.ready();
  return { h, tag };
}

async function running(tag: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)("ps", ["-eo", "args"]);
  return [...stdout.matchAll(new RegExp(`--tag=${tag}-(\\w)`, "g"))].map((m) => m[1] as string).sort();
}

async function until(done: () => boolean | Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 400; i++) {
    if (await done()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

describe("catalogCacheTtlMs", () => {
  it("answers from a cache older than the TTL at once, and connects its lazy servers in the background to list their tools afresh", async () => {
    const { h, tag } = await withCache(60_000, 1_000);
    // The cached list answers first; the servers' own lists (with tools the cache did not know) follow without a call.
    expect(await until(() => h.core.catalog.get("a__counter") !== undefined && h.core.catalog.get("b__counter") !== undefined)).toBe(true);
    expect(await running(tag)).toEqual(["a", "b"]);
  });

  it("leaves lazy servers idle when the cache is within the TTL, or when no TTL is set", async () => {
    for (const [age, ttl] of [
      [1_000, 3_600_000],
      [86_400_000, undefined],
    ] as const) {
      const { h, tag } = await withCache(age, ttl);
      expect(h.core.catalog.get("a__echo")).toBeDefined();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await running(tag)).toEqual([]);
      expect(h.core.catalog.get("a__counter")).toBeUndefined();
    }
  });
});
