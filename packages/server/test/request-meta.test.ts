import type { ToolCallMiddleware, ToolResult } from "@codemux/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer } from "../src/index";
import { isoTime, META_PROCESSED_AT, withRequestMeta } from "../src/render/request-meta";
import { config, misbehaving } from "./helpers";

describe("_meta on tools/call answers: the request's id, when it was processed, how long it took", () => {
  let core: Codemux;
  /** What a caching middleware keeps: the first result, handed to every later caller as it is. */
  let kept: ToolResult | undefined;
  const clients: Client[] = [];

  const clientOf = async (principal: string): Promise<Client> => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createSessionServer(core.sessions, { session: { id: `session-${principal}`, principal } }).connect(serverSide);
    const client = new Client({ name: principal, version: "1.0.0" });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  };
  const echo = async (client: Client, text: string) =>
    (await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text } } })) as CallToolResult;

  beforeAll(async () => {
    const cache: ToolCallMiddleware = async (ctx, next) => {
      kept ??= await next(ctx);
      return kept;
    };
    core = new Codemux({ config: config({ m: misbehaving() }), middleware: [cache] });
    core.start();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await core.close();
  });

  it("stamps the client's request id, the time codemux began and the duration under codemux's prefix", async () => {
    const alice = await clientOf("alice");
    const before = Date.now();
    const answer = await echo(alice, "first");
    const after = Date.now();
    expect(answer.content).toEqual([{ type: "text", text: "first" }]);
    const meta = answer._meta as Record<string, unknown>;
    expect(meta["codemux/requestId"]).toMatch(/^\d+$/);
    const processedAt = Date.parse(meta["codemux/processedAt"] as string);
    expect(processedAt).toBeGreaterThanOrEqual(before);
    expect(processedAt).toBeLessThanOrEqual(after);
    expect(meta["codemux/durationMs"]).toBeGreaterThanOrEqual(0);
    expect(meta["codemux/durationMs"]).toBeLessThanOrEqual(after - processedAt);
  });

  it("never hands one principal's request id to another, even when a middleware returns the same result object to both", async () => {
    const mallory = await clientOf("mallory");
    for (let i = 0; i < 3; i++) await echo(mallory, "warm");
    const alice = clients[0] as Client;
    const [fromAlice, fromMallory] = await Promise.all([echo(alice, "again"), echo(mallory, "again")]);
    // Each client numbers its own requests (initialize is 0): Alice's second call and Mallory's fourth.
    expect(fromAlice._meta?.["codemux/requestId"]).toBe("2");
    expect(fromMallory._meta?.["codemux/requestId"]).toBe("4");
    // The kept result was never written into: what the next caller gets holds no earlier request's stamp.
    expect(kept?._meta?.["codemux/requestId"]).toBeUndefined();
  });

  it("overwrites a request id that a result already claims (a hostile server's or plugin's)", async () => {
    (kept as ToolResult)._meta = { "codemux/requestId": "someone-elses", "codemux/durationMs": 123456, other: "kept" };
    const answer = await echo(clients[0] as Client, "spoofed");
    expect(answer._meta).toMatchObject({ other: "kept" });
    expect(answer._meta?.["codemux/requestId"]).not.toBe("someone-elses");
    expect(answer._meta?.["codemux/durationMs"]).not.toBe(123456);
  });
});
describe("isoTime", () => {
  it("writes what toISOString writes, across seconds, milliseconds and the layouts it leaves to it", () => {
    const start = Date.UTC(2026, 11, 31, 23, 59, 58, 990);
    const times = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -1, -62_198_755_200_000, 1.5];
    for (let ms = start; ms < start + 2_100; ms += 7) times.push(ms);
    // The same second again after another: the cached prefix must follow the second asked, not the last one made.
    times.push(start, start + 1_500, start);
    for (const ms of times) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it("throws as toISOString does for a time that is not one", () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });
});

describe("withRequestMeta", () => {
  it("stamps the start as ISO text", () => {
    const answer = withRequestMeta({ content: [] }, { id: "1", startedAt: Date.UTC(2026, 0, 2, 3, 4, 5, 67), endedAt: Date.UTC(2026, 0, 2, 3, 4, 5, 70) });
    expect(answer._meta?.[META_PROCESSED_AT]).toBe("2026-01-02T03:04:05.067Z");
  });
});
