import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Tool } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_TOOL_LIST_PAGES } from "../src/defaults";
import { ServerPool, type PoolOptions, type ServerSpec } from "../src/index";
import { until } from "./processes";

/** An in-process server that changes its tools without ever sending tools/list_changed; `hint` goes into each tools/list answer. */
function silentServer(hint: Record<string, unknown> = {}): { tools: Tool[]; lists: () => number; options: PoolOptions } {
  const tools: Tool[] = [{ name: "first", inputSchema: { type: "object" } }];
  let lists = 0;
  const createTransport = async () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    const mcp = new Server({ name: "silent", version: "1.0.0" }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => {
      lists += 1;
      return { tools: [...tools], ...hint };
    });
    await mcp.connect(server);
    return client;
  };
  return { tools, lists: () => lists, options: { createTransport } };
}

const spec = (extra: Partial<ServerSpec> = {}): ServerSpec => ({
  name: "s",
  transport: { type: "http", url: "http://in-process.invalid/mcp", headers: {} },
  callTimeoutMs: 5000,
  connectTimeoutMs: 5000,
  tools: {},
  ...extra,
});
const pools: ServerPool[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("servers that never send tools/list_changed", () => {
  it("are re-listed every 5 minutes by default, and the new tools reach the pool", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const server = silentServer();
    const pool = new ServerPool([spec()], server.options);
    pools.push(pool);
    await pool.start();
    expect(server.lists()).toBe(1);
    server.tools.push({ name: "added_quietly", inputSchema: { type: "object" } });
    const changed = new Promise<Tool[]>((resolve) => pool.once("tools", (_server, tools) => resolve(tools)));
    await vi.advanceTimersByTimeAsync(5 * 60_000 - 1);
    expect(server.lists()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await changed).map((t) => t.name)).toEqual(["first", "added_quietly"]);
    expect(pool.status()[0]!.lastRefreshAt).toBeDefined();
  });

  it("are asked again at each re-listing even when their answer carries a caching hint: the SDK client's list cache never answers for them", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const server = silentServer({ ttlMs: 3_600_000, cacheScope: "public" });
    const pool = new ServerPool([spec({ refreshIntervalMs: 1000 })], server.options);
    pools.push(pool);
    await pool.start();
    server.tools.push({ name: "added_quietly", inputSchema: { type: "object" } });
    const changed = new Promise<Tool[]>((resolve) => pool.once("tools", (_server, tools) => resolve(tools)));
    await vi.advanceTimersByTimeAsync(1000);
    expect(server.lists()).toBe(2);
    expect((await changed).map((t) => t.name)).toEqual(["first", "added_quietly"]);
  });

  it("follow a server's refreshIntervalMs, and 0 turns re-listing off", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const fast = silentServer();
    const off = silentServer();
    const fastPool = new ServerPool([spec({ refreshIntervalMs: 1000 })], fast.options);
    const offPool = new ServerPool([spec({ refreshIntervalMs: 0 })], { ...off.options, refreshIntervalMs: 1000 });
    pools.push(fastPool, offPool);
    await Promise.all([fastPool.start(), offPool.start()]);
    await vi.advanceTimersByTimeAsync(3000);
    await until(() => fast.lists() === 4);
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(off.lists()).toBe(1);
  });
});

/** An in-process server listing one tool a page, over `pages` pages (endless cursors with Infinity). */
function pagedServer(pages: number): { lists: () => number; options: PoolOptions } {
  let lists = 0;
  const createTransport = async () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    const mcp = new Server({ name: "paged", version: "1.0.0" }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async (request) => {
      lists += 1;
      const page = Number(request.params?.cursor ?? 0);
      return { tools: [{ name: `tool_${page}`, inputSchema: { type: "object" as const } }], ...(page + 1 < pages ? { nextCursor: String(page + 1) } : {}) };
    });
    await mcp.connect(server);
    return client;
  };
  return { lists: () => lists, options: { createTransport } };
}

describe("a server whose tools/list has many pages", () => {
  it("has every page followed, past the SDK client's own cap of 64", async () => {
    const server = pagedServer(70);
    const pool = new ServerPool([spec()], server.options);
    pools.push(pool);
    await pool.start();
    expect(pool.status()[0]!.toolCount).toBe(70);
    expect(server.lists()).toBe(70);
  });

  it("fails the listing, in a sentence, when the cursors never end: no more than MAX_TOOL_LIST_PAGES pages are asked for", async () => {
    const server = pagedServer(Number.POSITIVE_INFINITY);
    const pool = new ServerPool([spec()], server.options);
    pools.push(pool);
    await pool.start();
    const status = pool.status()[0]!;
    expect(status.state).toBe("failed");
    expect(status.error).toMatch(/tools\/list: exceeded listMaxPages \(1000\); server pagination did not terminate/);
    expect(server.lists()).toBe(MAX_TOOL_LIST_PAGES);
  });
});
