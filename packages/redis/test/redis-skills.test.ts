import { haveProgram, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisConnection, RedisLists, RedisSkillShelf, RedisUnavailableError, StoreFormatError } from "../src/index";

const haveRedis = haveProgram("redis-server", "redis-server");

describe.skipIf(!haveRedis)("saved skills and memories in Redis, against a real redis-server", () => {
  let redis: RedisServer;
  const closers: Array<{ close(): Promise<void> }> = [];
  /** One connection per simulated instance, as each codemux process has its own. */
  const connect = async (prefix = "codemux:") => {
    const connection = await RedisConnection.open({ url: redis.url, prefix });
    closers.push(connection);
    expect(await connection.ready(5000)).toBe(true);
    return connection;
  };
  const shelf = async (prefix = "codemux:") => {
    const connection = await connect(prefix);
    const skills = new RedisSkillShelf(connection);
    closers.unshift(skills);
    return { skills, connection };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const closer of closers) await closer.close();
    await redis?.stop();
  });

  it("shows a skill saved through one instance to the other, by its principal only", async () => {
    const a = (await shelf("share:")).skills;
    const b = (await shelf("share:")).skills;
    expect(await a.put({ principal: "alice", name: "summarize", record: '{"code":"alice\'s"}' }, { expected: undefined, max: 10 })).toBe("saved");
    expect(await b.of("alice")).toEqual(new Map([["summarize", '{"code":"alice\'s"}']]));
    expect(await b.all()).toEqual([{ principal: "alice", name: "summarize", record: '{"code":"alice\'s"}' }]);
    // Bob's skill of the same name is his own: alice's is untouched, and neither sees the other's.
    expect(await b.put({ principal: "bob", name: "summarize", record: '{"code":"bob\'s"}' }, { expected: undefined, max: 10 })).toBe("saved");
    expect(await a.of("alice")).toEqual(new Map([["summarize", '{"code":"alice\'s"}']]));
    expect(await a.of("bob")).toEqual(new Map([["summarize", '{"code":"bob\'s"}']]));
    expect(await a.of("mallory")).toEqual(new Map());
    // Bob deleting or forgetting removes only his.
    expect(await b.forget("bob")).toBe(1);
    expect(await b.delete("bob", "summarize")).toBe(false);
    expect(await a.of("alice")).toEqual(new Map([["summarize", '{"code":"alice\'s"}']]));
    expect((await a.all()).map((s) => s.principal)).toEqual(["alice"]);
  });

  it("refuses a save over a skill another instance changed since the writer read it, and a new skill past the bound", async () => {
    const a = (await shelf("race:")).skills;
    const b = (await shelf("race:")).skills;
    expect(await a.put({ principal: "alice", name: "f", record: "v1" }, { expected: undefined, max: 2 })).toBe("saved");
    // B believed "f" absent: A saved it meanwhile.
    expect(await b.put({ principal: "alice", name: "f", record: "b's" }, { expected: undefined, max: 2 })).toBe("changed");
    expect(await b.put({ principal: "alice", name: "f", record: "v2" }, { expected: "v1", max: 2 })).toBe("saved");
    // A still holds v1: its save is stale, and v2 stays.
    expect(await a.put({ principal: "alice", name: "f", record: "a's" }, { expected: "v1", max: 2 })).toBe("changed");
    expect((await a.of("alice")).get("f")).toBe("v2");
    // Two saves of one new name at once: exactly one wins, the other is told.
    const outcomes = await Promise.all([
      a.put({ principal: "alice", name: "g", record: "from a" }, { expected: undefined, max: 3 }),
      b.put({ principal: "alice", name: "g", record: "from b" }, { expected: undefined, max: 3 }),
    ]);
    expect(outcomes.sort()).toEqual(["changed", "saved"]);
    expect(await a.put({ principal: "alice", name: "h", record: "x" }, { expected: undefined, max: 2 })).toBe("full");
    expect(await a.delete("alice", "g")).toBe(true);
    expect(await a.put({ principal: "alice", name: "h", record: "x" }, { expected: undefined, max: 3 })).toBe("saved");
  });

  it("tells every instance whose skills changed, and to read everything again when it (re)subscribes", async () => {
    const a = (await shelf("news:")).skills;
    const b = (await shelf("news:")).skills;
    const heard: Array<string | undefined> = [];
    b.onChange((principal) => heard.push(principal));
    await until(() => heard.includes(undefined));
    await a.put({ principal: "alice", name: "f", record: "v1" }, { expected: undefined, max: 5 });
    await a.put({ principal: "bob", name: "f", record: "v1" }, { expected: undefined, max: 5 });
    await a.delete("alice", "f");
    await a.forget("bob");
    await until(() => heard.length >= 5);
    expect(heard).toEqual([undefined, "alice", "bob", "alice", "bob"]);
  });

  it("keeps deployments apart by prefix, never expires a skill, and refuses another format naming the key", async () => {
    const blue = await shelf("blue:");
    const green = await shelf("green:");
    await blue.skills.put({ principal: "alice", name: "f", record: "blue's" }, { expected: undefined, max: 5 });
    expect(await green.skills.of("alice")).toEqual(new Map());
    expect(await green.skills.all()).toEqual([]);
    const [key] = await blue.connection.client.keys("blue:skills:of:*");
    expect(await blue.connection.client.pttl(key as string)).toBe(-1);
    await blue.connection.client.hset(key as string, "g", "99\n{}");
    await expect(blue.skills.of("alice")).rejects.toThrow(StoreFormatError);
    await expect(blue.skills.all()).rejects.toThrow(/blue:skills:of:[0-9a-f]{32} g in format 99/);
  });

  it("keeps each principal's newest memories, bounded and expiring, and clears one principal's only", async () => {
    const connection = await connect("memory:");
    const a = new RedisLists(connection, { name: "memories" });
    const b = new RedisLists(await connect("memory:"), { name: "memories" });
    // Pushed through two instances at once: every one is kept.
    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).push("alice", `m${i}`, { max: 4, ttlMs: 60_000 })));
    const kept = await b.read("alice", 10);
    expect(kept).toHaveLength(4);
    await a.push("alice", "newest", { max: 4, ttlMs: 60_000 });
    expect(await b.read("alice", 2)).toEqual(["newest", kept[0]]);
    await a.push("bob", "bob's", { max: 4 });
    expect(await b.read("bob", 10)).toEqual(["bob's"]);
    const keys = await connection.client.keys("memory:list:memories:*");
    expect(keys).toHaveLength(2);
    // Both expire: alice's with her TTL, bob's (none given) after the default bound.
    for (const key of keys) expect(await connection.client.pttl(key)).toBeGreaterThan(0);
    expect(await b.clear("alice")).toBe(4);
    expect(await a.read("alice", 10)).toEqual([]);
    expect(await a.read("bob", 10)).toEqual(["bob's"]);
  });

  it("fails a save or a push with a sentence naming Redis while Redis is down", async () => {
    const connection = await RedisConnection.open({ url: "redis://127.0.0.1:1/", prefix: "down:" });
    closers.push(connection);
    const skills = new RedisSkillShelf(connection);
    await expect(skills.put({ principal: "alice", name: "f", record: "v" }, { expected: undefined, max: 5 })).rejects.toThrow(RedisUnavailableError);
    await expect(skills.put({ principal: "alice", name: "f", record: "v" }, { expected: undefined, max: 5 })).rejects.toThrow(
      /could not save skill "f" in Redis: Redis at redis:\/\/127\.0\.0\.1:1\//,
    );
    await expect(new RedisLists(connection, { name: "memories" }).push("alice", "m", { max: 5 })).rejects.toThrow(/could not keep memories in Redis/);
  });
});
