import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ServerPool, type PoolOptions, type ServerSpec } from "../src/index";
import { until } from "./processes";

/** An in-process server that changes its tools without ever sending tools/list_changed. */
function silentServer(): { tools: Tool[]; lists: () => number; options: PoolOptions } {
  const tools: Tool[] = [{ name: "first", inputSchema: { type: "object" } }];
  let lists = 0;
  const createTransport = async () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    const mcp = new Server({ name: "silent", version: "1.0.0" }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => {
      lists += 1;
      return { tools: [...tools] };
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
