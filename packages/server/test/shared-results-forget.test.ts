import { RedisConnection, RedisStore } from "@codemux/redis";
import { haveProgram, startRedisServer, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResultStore } from "../src/results";

describe.skipIf(!haveProgram("redis-server", "redis-server"))("forgetting a principal's kept results in the Redis store instances share", () => {
  let redis: RedisServer;
  const connections: RedisConnection[] = [];
  /** One instance's result store: a connection of its own, as each codemux process has. */
  const instance = async () => {
    const connection = await RedisConnection.open({ url: redis.url, prefix: "codemux:" });
    connections.push(connection);
    await connection.ready(5000);
    return new ResultStore({ store: new RedisStore(connection, { name: "results" }) });
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await redis?.stop();
  });

  it("has deleted the result from Redis when the instance that kept it answers, so the next one asked finds nothing more", async () => {
    const [kept, other] = [await instance(), await instance()];
    await kept.keep("m__huge", "x".repeat(100), { id: "s1", principal: "token:alice" });
    expect(await kept.forget("token:alice")).toBe(1);
    expect(await other.forget("token:alice")).toBe(0);
  });

  it("counts a result once when the instance that kept it and another forget the principal at the same moment", async () => {
    // The other instance has read the result's facts from Redis and not yet deleted them when the one that kept it forgets.
    let readFacts!: () => void;
    const factsRead = new Promise<void>((resolve) => (readFacts = resolve));
    let keptForgot!: () => void;
    const keptForgotten = new Promise<void>((resolve) => (keptForgot = resolve));
    class PausingStore extends RedisStore {
      override async read(key: string, options?: { owner?: string }) {
        const text = await super.read(key, options);
        if (key.endsWith(".meta") && text !== undefined) {
          readFacts();
          await keptForgotten;
        }
        return text;
      }
    }
    const kept = await instance();
    const connection = await RedisConnection.open({ url: redis.url, prefix: "codemux:" });
    connections.push(connection);
    await connection.ready(5000);
    const other = new ResultStore({ store: new PausingStore(connection, { name: "results" }) });
    await kept.keep("m__huge", "x".repeat(100), { id: "s2", principal: "token:bob" });
    const elsewhere = other.forget("token:bob");
    await factsRead;
    const here = await kept.forget("token:bob");
    keptForgot();
    expect(here + (await elsewhere)).toBe(1);
  });
});
