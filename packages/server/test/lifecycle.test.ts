import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { EventEmitter } from "node:events";
import type { PoolConfig } from "@codemux/pool";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { FileStore, MemoryStore, createSessionServer, type ToolPool } from "../src/index";
import { ResultStore } from "../src/results";
import { config, connect, misbehaving, textOf, type Harness } from "./helpers";

const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "codemux-cache-"));
  dirs.push(dir);
  return dir;
}

/** A pool whose servers stay "connecting" for ever: what a server that never answers initialize looks like. */
function stalledPool(poolConfig: PoolConfig): ToolPool {
  const events = new EventEmitter();
  return {
    names: poolConfig.servers.map((s) => s.name),
    status: () =>
      poolConfig.servers.map((s, i) => ({
        name: s.name,
        alias: `c${i + 1}`,
        id: "00000000",
        state: "connecting" as const,
        transport: "stdio" as const,
        endpoint: "stalled",
        toolCount: 0,
        stderrTail: [],
        restarts: 0,
      })),
    start: () => new Promise<void>(() => undefined),
    callTool: () => new Promise(() => undefined),
    on: (event: string, listener: (...args: unknown[]) => void) => events.on(event, listener),
    off: (event: string, listener: (...args: unknown[]) => void) => events.off(event, listener),
    close: async () => undefined,
  } as ToolPool;
}

const open = async (...args: Parameters<typeof connect>) => {
  const h = await connect(...args);
  harnesses.push(h);
  return h;
};

describe("startup", () => {
  it("a search that arrives while servers connect waits for them instead of answering from a half-empty catalog", async () => {
    const h = await open({ config: config({ slow: misbehaving("--start-delay-ms", "800") }) });
    const text = await h.text("search_tools", { query: "return the text it is given", limit: 1 });
    expect(text).toContain("slow__echo");
  });

  it("bounds that wait, and says which servers are still connecting", async () => {
    const h = await open({ config: config({ slow: misbehaving("--start-delay-ms", "5000") }), discoveryWaitMs: 200 });
    const text = await h.text("search_tools", { query: "echo" });
    expect(text).toContain("still connecting: slow; their tools are not listed yet");
  });

  it("answers at once from the last good catalog on disk after a restart, then refreshes behind", async () => {
    const cacheDir = await tempDir();
    const servers = config({ m: misbehaving("--start-delay-ms", "1500") });
    const first = await open({ config: servers, cacheDir });
    await first.core.ready();
    await first.close();
    harnesses.pop();

    const second = await open({ config: servers, cacheDir, startupWaitMs: 10_000 });
    const started = Date.now();
    const text = await second.text("search_tools", { query: "return the text it is given", limit: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(text).toContain("m__echo");
    expect(text).toContain("their tools are listed from the last run");
    // The call waits for the real server.
    expect(await second.text("call_tool", { name: "m__echo", args: { text: "live" } })).toBe("live");
  });

  it("does not use another config's cache", async () => {
    const cacheDir = await tempDir();
    const first = await open({ config: config({ m: misbehaving() }), cacheDir });
    await first.core.ready();
    await first.close();
    harnesses.pop();
    const other = await open({ config: config({ m: misbehaving("--start-delay-ms", "3000") }), cacheDir, discoveryWaitMs: 100 });
    expect(await other.text("search_tools", { query: "echo" })).toContain("their tools are not listed yet");
  });
});

describe("a server that never finishes starting", () => {
  // Each of these would run into the test's own timeout if it waited for the hung server (startupWaitMs is a minute).
  it("does not hold up calls to a healthy server, nor searches and module lists after the first seconds", async () => {
    const h = await open({
      config: config({ hung: misbehaving("--start-delay-ms", "120000"), ok: misbehaving() }),
      startupWaitMs: 60_000,
      discoveryWaitMs: 500,
    });
    expect(await h.text("call_tool", { name: "ok__echo", args: { text: "not held up" } })).toBe("not held up");
    const search = await h.text("search_tools", { query: "return the text it is given", limit: 1 });
    expect(search).toContain("ok__echo");
    expect(search).toContain("still connecting: hung");
    expect(await h.text("list_modules")).toMatch(/mcp\/servers\/hung  \(starting \(\d+ s\)\)/);
    const run = JSON.parse(
      await h.text("execute_code", { code: 'import { echo } from "mcp/servers/ok/echo";\nexport default await echo({ text: "snippet" });' }),
    );
    expect(run.result).toBe("snippet");
  });

  it("answers searches at once from the cache while it hangs", async () => {
    const cacheDir = await tempDir();
    const first = await open({ config: config({ m: misbehaving() }), cacheDir });
    await first.core.ready();
    await first.close();
    harnesses.pop();
    // Same config key (the cache is keyed by the servers' specs), so the hung start below is the same server to the cache.
    const hung = config({ m: misbehaving() });
    const h = await open({ config: hung, cacheDir, startupWaitMs: 60_000, pool: stalledPool(hung) });
    expect(await h.text("search_tools", { query: "return the text it is given", limit: 1 })).toContain("m__echo");
  });
});

describe("reload", () => {
  it("applies a changed config: new servers start, removed ones stop, unchanged ones keep their process; clients hear of it", async () => {
    const h = await open({ config: config({ a: misbehaving() }), mode: "passthrough" });
    await h.core.ready();
    const pid = JSON.parse(await h.text("a__counter")).pid as number;
    let notified = 0;
    h.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notified++;
    });
    const update = await h.core.reload(config({ a: misbehaving(), b: misbehaving("--name", "b") }));
    expect(update).toEqual({ added: ["b"], removed: [], changed: [] });
    await h.core.ready();
    expect(JSON.parse(await h.text("a__counter")).pid).toBe(pid);
    expect(await h.text("b__echo", { text: "new" })).toBe("new");
    expect(await h.core.reload(config({ b: misbehaving("--name", "b") }))).toEqual({ added: [], removed: ["a"], changed: [] });
    expect(h.core.catalog.servers()).toEqual(["b"]);
    // Gone from tools/list, it is unknown to the client: a JSON-RPC -32602 naming what it is offered now.
    await expect(h.call("a__counter")).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool "a__counter": this client is offered b__echo'),
    });
    await expect.poll(() => notified, { timeout: 3000 }).toBeGreaterThan(0);
  });
});

describe("the call context", () => {
  it("carries the session, the origin and the client request's id to middleware, for calls from snippets too", async () => {
    const seen: Array<{ origin: string; requestId: string | undefined; session: string }> = [];
    const h = await open({
      config: config({ m: misbehaving() }),
      middleware: [
        async (ctx, next) => {
          seen.push({ origin: ctx.origin, requestId: ctx.requestId, session: ctx.session.id });
          return next(ctx);
        },
      ],
    });
    await h.text("call_tool", { name: "m__echo", args: { text: "a" } });
    await h.text("execute_code", { code: 'import { echo } from "mcp/servers/m/echo";\nexport default await echo({ text: "b" });' });
    expect(seen.map((s) => s.origin)).toEqual(["call_tool", "execute_code"]);
    expect(seen[0]?.requestId).toMatch(/^\d+$/);
    expect(seen[1]?.requestId).toMatch(/^\d+$/);
    expect(seen[0]?.requestId).not.toBe(seen[1]?.requestId);
    expect(new Set(seen.map((s) => s.session)).size).toBe(1);
  });
});

describe("sessions", () => {
  it("serves several client sessions from one pool and catalog", async () => {
    const h = await open({ config: config({ m: misbehaving() }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createSessionServer(h.core.sessions).connect(serverSide);
    const second = new Client({ name: "second", version: "1.0.0" });
    await second.connect(clientSide);
    const [a, b] = await Promise.all([
      h.text("call_tool", { name: "m__counter" }),
      second.callTool({ name: "call_tool", arguments: { name: "m__counter" } }).then((r) => textOf(r as CallToolResult)),
    ]);
    // One downstream process answered both sessions.
    expect(JSON.parse(a).pid).toBe(JSON.parse(b).pid);
    expect([JSON.parse(a).calls, JSON.parse(b).calls].sort()).toEqual([1, 2]);
    await second.close();
  });
});

describe("tool list changes", () => {
  it("refreshes the catalog and the wrapper modules when a server's tools change", async () => {
    const h = await open({ config: config({ m: misbehaving() }), poolOptions: { listChangedDebounceMs: 10 } });
    await h.text("call_tool", { name: "m__add_tool", args: { name: "freshly_added" } });
    await expect.poll(() => h.core.catalog.get("m__freshly_added"), { timeout: 3000 }).toBeDefined();
    expect(await h.text("read_module", { specifier: "mcp/servers/m/freshlyAdded" })).toContain("export async function freshlyAdded(");
    expect(await h.text("call_tool", { name: "m__freshly_added" })).toBe("called freshly_added");
  });

  it("tells a passthrough client that its tool list changed", async () => {
    const h = await open({ config: config({ m: misbehaving() }), mode: "passthrough", poolOptions: { listChangedDebounceMs: 10 } });
    await h.core.ready();
    let notified = 0;
    h.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notified++;
    });
    await h.client.callTool({ name: "m__add_tool", arguments: { name: "another" } });
    await expect.poll(() => notified, { timeout: 3000 }).toBeGreaterThan(0);
    expect((await h.client.listTools()).tools.map((t) => t.name)).toContain("m__another");
  });
});

describe("execute_code and the downstream", () => {
  it("passes inner calls' progress to the client", async () => {
    const h = await open({ config: config({ m: misbehaving() }) });
    const messages: string[] = [];
    const result = (await h.client.callTool(
      { name: "execute_code", arguments: { code: 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 400, steps: 4 });' } },
      undefined,
      { onprogress: (p) => messages.push(p.message ?? "") },
    )) as CallToolResult;
    expect(JSON.parse(textOf(result)).result).toBe("slept 400 ms");
    expect(messages.length).toBeGreaterThanOrEqual(4);
    // The line for the call's start comes first, then the server's own progress.
    expect(messages.slice(0, 2)).toEqual(["m__slow", "m__slow: 1/4"]);
  });

  it("fails a call in flight when the server crashes, and the server is back for the next snippet", async () => {
    const h = await open({ config: config({ m: misbehaving() }) });
    const crashed = JSON.parse(
      await h.text("execute_code", {
        code: 'import { crash } from "mcp/servers/m/crash";\ntry { await crash({}); } catch (e) { console.log((e as Error).message); }\nexport default "survived";',
      }),
    );
    expect(crashed.result).toBe("survived");
    expect(crashed.stdout).toMatch(/Server "m" disconnected during the call: the process exited with code 1/);
    const again = JSON.parse(await h.text("execute_code", { code: 'import { counter } from "mcp/servers/m/counter";\nexport default await counter({});' }));
    expect(again.result.calls).toBe(1);
  });
});

describe("ResultStore", () => {
  it("keeps results in files, expires them, forgets the oldest past its size cap, and deletes the files", async () => {
    let now = 0;
    const dir = await tempDir();
    const store = new ResultStore({ ttlMs: 1000, maxBytes: 10, now: () => now, store: new FileStore({ dir, now: () => now }) });
    const a = await store.keep("t", "123456", { id: "s1", principal: "local" });
    const b = await store.keep("t", "abcdef", { id: "s1", principal: "local" });
    await expect(store.get(a.handle, "s1")).rejects.toThrow(/expired or never existed/);
    expect(await store.read(b.handle, "s1")).toBe("abcdef");
    await expect.poll(() => readdir(dir)).toEqual([b.handle]);
    now = 1001;
    await expect(store.read(b.handle, "s1")).rejects.toThrow(/expired/);
    expect(store.size).toBe(0);
    await expect.poll(() => readdir(dir)).toEqual([]);
  });

  it("keeps each principal's results for its own retention, and forgets one principal's results only", async () => {
    let now = 0;
    const store = new ResultStore({
      ttlMs: 1000,
      ttlFor: (principal) => (principal === "token:ci" ? 100 : undefined),
      now: () => now,
      store: new MemoryStore({ now: () => now }),
    });
    const ci = await store.keep("t", "ci's", { id: "s-ci", principal: "token:ci" });
    const alice = await store.keep("t", "alice's", { id: "s-a", principal: "token:alice" });
    const alice2 = await store.keep("t", "alice's too", { id: "s-a2", principal: "token:alice" });
    const bob = await store.keep("t", "bob's", { id: "s-b", principal: "token:bob" });
    expect(ci.expiresAt).toBe(100);
    expect(alice.expiresAt).toBe(1000);
    now = 101;
    await expect(store.read(ci.handle, "s-ci")).rejects.toThrow(/expired or never existed/);
    expect(await store.read(alice.handle, "s-a")).toBe("alice's");
    expect(await store.forget("token:alice")).toBe(2);
    await expect(store.read(alice.handle, "s-a")).rejects.toThrow(/expired or never existed/);
    await expect(store.read(alice2.handle, "s-a2")).rejects.toThrow(/expired or never existed/);
    expect(await store.read(bob.handle, "s-b")).toBe("bob's");
  });

  it("refuses handles that are not its own, such as paths, and another session's handles", async () => {
    const store = new ResultStore();
    const kept = await store.keep("t", "x", { id: "session-a", principal: "local" });
    for (const handle of ["../../etc/passwd", "/etc/passwd", "res_../../x"]) await expect(store.read(handle, "session-a")).rejects.toThrow(/No kept result/);
    // Another session gets exactly the answer an unknown handle gets: nothing tells it the handle exists.
    await expect(store.read(kept.handle, "session-b")).rejects.toThrow(`No kept result "${kept.handle}": it expired or never existed`);
    expect(await store.read(kept.handle, "session-a")).toBe("x");
    await store.clear();
  });
});
