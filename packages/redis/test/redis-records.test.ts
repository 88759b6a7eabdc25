import { haveProgram, startRedisServer, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisConnection, RedisRecordTable, StoreFormatError } from "../src/index";

const haveRedis = haveProgram("redis-server", "redis-server");

describe.skipIf(!haveRedis)("the Redis record table (shared pins), against a real redis-server", () => {
  let redis: RedisServer;
  const connections: RedisConnection[] = [];
  /** One connection per simulated instance, as each codemux process has its own. */
  const table = async (name = "pins", prefix = "codemux:") => {
    const connection = await RedisConnection.open({ url: redis.url, prefix });
    connections.push(connection);
    expect(await connection.ready(5000)).toBe(true);
    return { table: new RedisRecordTable(connection, { name }), connection };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await redis?.stop();
  });

  it("sets a record only over the value the writer read: a stale write is refused, and another instance reads the winner", async () => {
    const a = (await table("swap")).table;
    const b = (await table("swap")).table;
    expect(await a.swap("mail__send", undefined, "first")).toBe(true);
    // B believed the record absent: it is not any more.
    expect(await b.swap("mail__send", undefined, "other")).toBe(false);
    expect(await b.swap("mail__send", "first", "second")).toBe(true);
    // A still holds "first": its write is stale.
    expect(await a.swap("mail__send", "first", "third")).toBe(false);
    expect(await a.get("mail__send")).toBe("second");
    expect(await a.all()).toEqual(new Map([["mail__send", "second"]]));
    expect(await a.get("mail__list")).toBeUndefined();
  });

  it("loses no update when two instances change one record at once, each reading again after a refused write", async () => {
    const a = (await table("race")).table;
    const b = (await table("race")).table;
    const increment = async (t: RedisRecordTable) => {
      for (;;) {
        const current = await t.get("counter");
        if (await t.swap("counter", current, String(Number(current ?? 0) + 1))) return;
      }
    };
    await Promise.all(Array.from({ length: 40 }, (_, i) => increment(i % 2 ? a : b)));
    expect(await a.get("counter")).toBe("40");
  });

  it("keeps deployments apart by prefix, and the pins do not expire", async () => {
    const blue = await table("pins", "blue:");
    const green = await table("pins", "green:");
    await blue.table.swap("mail__send", undefined, "blue's");
    expect(await green.table.get("mail__send")).toBeUndefined();
    expect(await blue.connection.client.pttl("blue:records:pins")).toBe(-1);
  });

  it("refuses a record of another format version with a sentence naming the key", async () => {
    const { table: t, connection } = await table("future");
    await connection.client.hset("codemux:records:future", "mail__send", "99\n{}");
    await expect(t.get("mail__send")).rejects.toThrow(StoreFormatError);
    await expect(t.all()).rejects.toThrow(/codemux:records:future in format 99/);
  });
});
