import { createSessionServer, MemoryStore } from "@codemux/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CACHE_META, cachePlugin } from "@codemux/hooks";
import { connect, filesystem, misbehaving, tempDir, textOf, type Harness } from "./harness";

/** A second client on the harness's core, as another principal (what a token's name is over HTTP). */
async function asPrincipal(harness: Harness, principal: string): Promise<(name: string, args?: Record<string, unknown>) => Promise<CallToolResult>> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(harness.core.sessions, { session: { id: `${principal}-session`, principal } }).connect(serverSide);
  const client = new Client({ name: principal, version: "1.0.0" });
  await client.connect(clientSide);
  return async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const count = (text: string) => JSON.parse(text).calls as number;

describe("cache", () => {
  it("answers a listed tool's repeated call from memory, keyed by canonical arguments", async () => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [cachePlugin({ tools: ["s__counter", "s__echo"] })] });
    const first = await harness.call("s__counter");
    const second = await harness.call("s__counter");
    expect(textOf(second)).toBe(textOf(first));
    expect(second._meta?.[CACHE_META]).toBe("hit");
    expect(first._meta?.[CACHE_META]).toBeUndefined();

    const a = await harness.client.callTool({ name: "s__echo", arguments: { text: "a" } });
    const b = await harness.client.callTool({ name: "s__echo", arguments: { text: "b" } });
    expect(textOf(b as never)).toBe("b");
    expect((a as { _meta?: Record<string, unknown> })._meta?.[CACHE_META]).toBeUndefined();
  });

  it("with a shared store, answers hits from it and keeps nothing of its own in memory", async () => {
    const cache = cachePlugin({ tools: ["s__counter"] });
    harness = await connect({ servers: { s: misbehaving() }, plugins: [cache], host: { sharedStore: new MemoryStore() } });
    const first = await harness.call("s__counter");
    for (let i = 0; i < 3; i++) expect((await harness.call("s__counter"))._meta?.[CACHE_META]).toBe("hit");
    expect(textOf(await harness.call("s__counter"))).toBe(textOf(first));
    expect({ size: cache.size, bytes: cache.bytes }).toEqual({ size: 0, bytes: 0 });
  });

  it("treats argument objects with keys in another order as the same call", async () => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [cachePlugin({ tools: ["s__huge"] })] });
    await harness.call("s__huge", { bytes: 10, lines: false });
    const again = await harness.call("s__huge", { lines: false, bytes: 10 });
    expect(again._meta?.[CACHE_META]).toBe("hit");
  });

  it("never keeps an error result or a thrown error", async () => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [cachePlugin({ tools: ["s__fail", "s__throw"] })] });
    await harness.call("s__fail", { message: "nope" });
    const again = await harness.call("s__fail", { message: "nope" });
    expect(again.isError).toBe(true);
    expect(again._meta?.[CACHE_META]).toBeUndefined();
    await harness.call("s__throw", { message: "boom" });
    const thrown = await harness.call("s__throw", { message: "boom" });
    expect(thrown._meta?.[CACHE_META]).toBeUndefined();
  });

  it("caches tools their server marks read-only (filesystem read_text_file) and not its writers", async () => {
    const root = tempDir();
    const file = join(root, "a.txt");
    writeFileSync(file, "first");
    harness = await connect({ servers: { fs: filesystem(root) }, plugins: [cachePlugin()] });
    expect(textOf(await harness.call("fs__read_text_file", { path: file }))).toBe("first");
    writeFileSync(file, "second");
    const cached = await harness.call("fs__read_text_file", { path: file });
    expect(textOf(cached)).toBe("first");
    expect(cached._meta?.[CACHE_META]).toBe("hit");
    await harness.call("fs__write_file", { path: file, content: "third" });
    const write = await harness.call("fs__write_file", { path: file, content: "third" });
    expect(write._meta?.[CACHE_META]).toBeUndefined();
  });

  it("keeps each principal's entries apart by default: another principal's call is never a hit and never gets what the first was answered", async () => {
    const root = tempDir();
    const file = join(root, "notes.txt");
    writeFileSync(file, "alice's notes");
    harness = await connect({ servers: { fs: filesystem(root) }, plugins: [cachePlugin()] });
    const bob = await asPrincipal(harness, "bob");
    expect(textOf(await harness.call("fs__read_text_file", { path: file }))).toBe("alice's notes");
    writeFileSync(file, "changed");
    const bobs = await bob("fs__read_text_file", { path: file });
    expect(bobs._meta?.[CACHE_META]).toBeUndefined();
    expect(textOf(bobs)).toBe("changed");
    // Each principal's own repeat is still a hit.
    expect((await bob("fs__read_text_file", { path: file }))._meta?.[CACHE_META]).toBe("hit");
    expect(textOf(await harness.call("fs__read_text_file", { path: file }))).toBe("alice's notes");
  });

  it("forgets one principal's entries in memory (codemux forget) and keeps the others'", async () => {
    const cache = cachePlugin({ tools: ["s__counter"] });
    harness = await connect({ servers: { s: misbehaving() }, plugins: [cache] });
    const bob = await asPrincipal(harness, "token:bob");
    const mine = textOf(await harness.call("s__counter"));
    const bobs = textOf(await bob("s__counter"));
    expect(await cache.forget?.("token:bob")).toBe(1);
    const again = await bob("s__counter");
    expect(again._meta?.[CACHE_META]).toBeUndefined();
    expect(textOf(again)).not.toBe(bobs);
    expect(textOf(await harness.call("s__counter"))).toBe(mine);
    expect(await cache.forget?.("token:nobody")).toBe(0);
  });

  it("shares entries across principals only when perPrincipal is false", async () => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [cachePlugin({ tools: ["s__counter"], perPrincipal: false })] });
    const bob = await asPrincipal(harness, "bob");
    const first = textOf(await harness.call("s__counter"));
    const shared = await bob("s__counter");
    expect(shared._meta?.[CACHE_META]).toBe("hit");
    expect(textOf(shared)).toBe(first);
  });

  it("forgets an entry after its TTL", async () => {
    let now = 1_000_000;
    harness = await connect({ servers: { s: misbehaving() }, plugins: [cachePlugin({ tools: ["s__counter"], ttlMs: 1000 })], host: { clock: () => now } });
    const first = count(textOf(await harness.call("s__counter")));
    now += 999;
    expect(count(textOf(await harness.call("s__counter")))).toBe(first);
    now += 2;
    expect(count(textOf(await harness.call("s__counter")))).toBe(first + 1);
  });

  it("stays within its byte bound, dropping the least recently used", async () => {
    const cache = cachePlugin({ tools: ["s__huge"], maxBytes: 5000 });
    harness = await connect({ servers: { s: misbehaving() }, plugins: [cache] });
    for (const bytes of [1000, 1100, 1200, 1300, 1400, 1500]) await harness.call("s__huge", { bytes });
    expect(cache.bytes).toBeLessThanOrEqual(5000);
    expect(cache.size).toBeLessThan(6);
    expect((await harness.call("s__huge", { bytes: 1500 }))._meta?.[CACHE_META]).toBe("hit");
    expect((await harness.call("s__huge", { bytes: 1000 }))._meta?.[CACHE_META]).toBeUndefined();
  });
});
