import { STORE_FORMAT_VERSION, TokenBuckets } from "@codemux/core";
import { haveProgram, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstanceRegistry, RedisBuckets, RedisConnection, RedisJobShare, RedisStore, RedisUnavailableError, StoreFormatError } from "../src/index";

const haveRedis = haveProgram("redis-server", "redis-server");

describe.skipIf(!haveRedis)("the Redis store, against a real redis-server", () => {
  let redis: RedisServer;
  const connections: RedisConnection[] = [];
  /** One connection per simulated instance, as each codemux process has its own. */
  const connect = async (prefix = "codemux:") => {
    const connection = await RedisConnection.open({ url: redis.url, prefix });
    connections.push(connection);
    expect(await connection.ready(5000)).toBe(true);
    return connection;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await redis?.stop();
  });

  it("lets an entry written by one instance be read by another, by its owner only", async () => {
    const a = new RedisStore(await connect(), { name: "results" });
    const b = new RedisStore(await connect(), { name: "results" });
    await a.write("res_000000000001", "kept text", { owner: "s1", ttlMs: 60_000 });
    expect(await b.read("res_000000000001", { owner: "s1" })).toBe("kept text");
    expect(await b.read("res_000000000001", { owner: "s2" })).toBeUndefined();
    expect(await b.read("res_000000000001")).toBeUndefined();
    expect(await b.stat("res_000000000001", { owner: "s1" })).toMatchObject({ bytes: 9, owner: "s1" });
  });

  it("says which of two instances deleting one entry at once deleted it (forget counts it once)", async () => {
    const a = new RedisStore(await connect(), { name: "plugin-cache" });
    const b = new RedisStore(await connect(), { name: "plugin-cache" });
    await a.write("answer-1", "cached", { owner: "token:alice" });
    expect((await Promise.all([a.remove("answer-1"), b.remove("answer-1")])).filter(Boolean)).toHaveLength(1);
    expect(await b.read("answer-1", { owner: "token:alice" })).toBeUndefined();
  });

  it("bounds every key by an expiry, also entries written without one", async () => {
    const connection = await connect();
    const store = new RedisStore(connection, { name: "cache", maxTtlMs: 3_600_000 });
    await store.write("catalog-x.json", "{}");
    await store.write("res_000000000002", "x", { ttlMs: 120_000 });
    const forever = await connection.client.pttl("codemux:store:cache:catalog-x.json");
    const kept = await connection.client.pttl("codemux:store:cache:res_000000000002");
    expect(forever).toBeGreaterThan(0);
    expect(forever).toBeLessThanOrEqual(3_600_000);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(120_000);
  });

  it("keeps deployments apart by prefix", async () => {
    const teamA = new RedisStore(await connect("team-a:"), { name: "cache" });
    const teamB = new RedisStore(await connect("team-b:"), { name: "cache" });
    await teamA.write("shared-name", "a's");
    expect(await teamB.read("shared-name")).toBeUndefined();
    expect((await teamA.list()).map((e) => e.key)).toEqual(["shared-name"]);
  });

  it("refuses an entry of a format it does not know, with a sentence that says why", async () => {
    const connection = await connect();
    const store = new RedisStore(connection, { name: "results" });
    await connection.client.hset("codemux:store:results:res_00000000000f", { v: String(STORE_FORMAT_VERSION + 1), d: "from the future" });
    const failure = await store.read("res_00000000000f").catch((error: unknown) => error);
    expect(StoreFormatError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toMatch(/format 2, which this codemux \(format 1\) does not read/);
  });

  it("shares one rate limit: two instances together let through no more than the limit", async () => {
    const a = new RedisBuckets(await connect());
    const b = new RedisBuckets(await connect());
    const rate = { capacity: 5, calls: 5, perMs: 3_600_000 };
    const verdicts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).takeAll([{ key: "principal-x", rate }], 0)));
    expect(verdicts.filter((v) => v.waitMs === 0)).toHaveLength(5);
    const refused = verdicts.find((v) => v.waitMs > 0);
    expect(refused).toMatchObject({ refused: 0 });
    // The same verdicts as the in-memory buckets: a refusal spends nothing from the other bucket.
    const memory = new TokenBuckets();
    expect(memory.takeAll([{ key: "k", rate: { capacity: 1, calls: 1, perMs: 1000 } }], 0)).toEqual({ waitMs: 0 });
    expect(
      await a.takeAll(
        [
          { key: "fresh", rate },
          { key: "principal-x", rate },
        ],
        0,
      ),
    ).toMatchObject({ refused: 1 });
    expect(await a.takeAll([{ key: "fresh", rate }], 0)).toEqual({ waitMs: 0 });
    expect(Number(await (await connect()).client.hget("codemux:bucket:fresh", "t"))).toBe(4);
  });

  it("registers instances with a heartbeat and finds their addresses", async () => {
    const registry = new InstanceRegistry(await connect(), { id: "alpha", ttlMs: 10_000 });
    const other = new InstanceRegistry(await connect(), { id: "beta" });
    registry.start("http://127.0.0.1:1");
    await until(async () => (await other.addressOf("alpha")) === "http://127.0.0.1:1");
    await registry.stop();
    expect(await other.addressOf("alpha")).toBeUndefined();
  });

  it("shares job records by principal, newest first, and carries a cancel to the instance that listens", async () => {
    const a = new InstanceRegistry(await connect(), { id: "job-a" });
    const aConnection = await connect();
    const shareA = new RedisJobShare(aConnection, a);
    const shareB = new RedisJobShare(await connect(), new InstanceRegistry(await connect(), { id: "job-b" }));
    a.start("http://127.0.0.1:1");
    const heard: string[] = [];
    shareA.onCancel((id, by) => heard.push(`${id} by ${by}`));
    await shareA.put({ id: "job_1", principal: "token:alice", createdAt: 1, record: '{"id":"job_1"}', ttlMs: 60_000 });
    await shareA.put({ id: "job_2", principal: "token:alice", createdAt: 2, record: '{"id":"job_2"}', ttlMs: 60_000 });
    await shareA.put({ id: "job_3", principal: "token:bob", createdAt: 3, record: '{"id":"job_3"}', ttlMs: 60_000 });
    expect(await shareB.list("token:alice", 10)).toEqual(['{"id":"job_2"}', '{"id":"job_1"}']);
    expect(await shareB.list("token:alice", 1)).toEqual(['{"id":"job_2"}']);
    await until(async () => {
      await shareB.cancel("job_2", "tool");
      return heard.length > 0;
    });
    expect(heard[0]).toBe("job_2 by tool");
    await until(async () => await shareB.alive("job-a"));
    expect(await shareB.alive("job-c")).toBe(false);
    await Promise.all([shareA.close(), shareB.close(), a.stop()]);
  });

  it("fails with an error naming Redis while it is down, and reconnects by itself", async () => {
    const connection = await connect();
    const store = new RedisStore(connection, { name: "results" });
    await store.write("before", "acknowledged");
    await redis.kill();
    await until(() => !connection.up());
    const failure = await store.read("before").catch((error: unknown) => error);
    expect(RedisUnavailableError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toMatch(/^codemux could not read before from Redis: Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer/);
    await redis.restart();
    expect(await connection.ready(10_000)).toBe(true);
    // appendfsync always: what was acknowledged before the kill is there after it.
    expect(await store.read("before")).toBe("acknowledged");
  });
});
