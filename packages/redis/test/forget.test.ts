import { STORE_FORMAT_VERSION } from "@codemux/core";
import { haveProgram, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstanceRegistry, RedisConnection, RedisForgetRequests } from "../src/index";

const haveRedis = haveProgram("redis-server", "redis-server");

describe.skipIf(!haveRedis)("asking every instance to forget a principal, against a real redis-server", () => {
  let redis: RedisServer;
  const closers: Array<{ close(): Promise<void> }> = [];
  /** One connection, registration and forget channel per simulated instance, as each codemux process has its own. */
  const instance = async (id: string, forget?: (principal: string) => Promise<Record<string, number>>) => {
    const connection = await RedisConnection.open({ url: redis.url, prefix: "codemux:" });
    expect(await connection.ready(5000)).toBe(true);
    const registry = new InstanceRegistry(connection, { id });
    const requests = new RedisForgetRequests(connection, registry);
    closers.push(requests, connection, { close: () => registry.stop() });
    if (forget) {
      registry.start(`http://${id}.example:3920`);
      requests.answer(forget);
      // Listening once Redis counts its subscription.
      await until(async () => ((await connection.client.pubsub("NUMSUB", "codemux:forget:asks")) as [string, number])[1] > 0);
    }
    return { connection, registry, requests };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const closer of closers.reverse()) await closer.close();
    await redis?.stop();
  });

  it("reaches every registered instance, each forgetting the principal it was asked about, and says what each deleted", async () => {
    const heard: string[] = [];
    await instance("a", async (principal) => (heard.push(`a:${principal}`), { activity: 2 }));
    await instance("b", async (principal) => (heard.push(`b:${principal}`), { activity: 3, results: 1 }));
    const asker = await instance("cli");
    const { answered, missed } = await asker.requests.ask("token:alice");
    expect(heard.sort()).toEqual(["a:token:alice", "b:token:alice"]);
    expect(answered.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: "a", address: "http://a.example:3920", forgotten: { activity: 2 } },
      { id: "b", address: "http://b.example:3920", forgotten: { activity: 3, results: 1 } },
    ]);
    expect(missed).toEqual([]);
    // The answers are read and gone.
    expect(await asker.connection.client.keys("codemux:forget:answers:*")).toEqual([]);
  });

  it("names an instance that is registered but does not hear asks, at once (every listener answered), and one whose forget failed", async () => {
    const a = await instance("a2", async () => {
      throw new Error("the disk is full");
    });
    // Registered (its heartbeat is fresh) but not listening: a process stopped, or one of another version.
    await a.connection.client.set("codemux:instance:ghost", JSON.stringify({ v: STORE_FORMAT_VERSION, address: "http://ghost.example:3920" }), "PX", 60_000);
    const asker = await instance("cli2");
    // A bound of ten minutes: the ask returns as soon as every listener answered, well within the test's time.
    const { missed } = await asker.requests.ask("token:bob", { waitMs: 600_000 });
    expect(missed).toContainEqual({ id: "ghost", address: "http://ghost.example:3920" });
    expect(missed).toContainEqual({ id: "a2", address: "http://a2.example:3920", error: "the disk is full" });
  });

  it("is ignored when it does not name a principal, or names one with control characters", async () => {
    const heard: string[] = [];
    const a = await instance("a3", async (principal) => (heard.push(principal), {}));
    for (const ask of ["not json", JSON.stringify({ id: "0".repeat(24), principal: "a\u0001b" }), JSON.stringify({ id: "x", principal: "token:ok" })])
      await a.connection.client.publish("codemux:forget:asks", ask);
    await asker(a.connection);
    expect(heard).toEqual(["token:carol"]);
  });

  /** One well-formed ask after the bad ones: when it is heard, the earlier ones were too. */
  async function asker(connection: RedisConnection): Promise<void> {
    await new RedisForgetRequests(connection, new InstanceRegistry(connection, { id: "probe" })).ask("token:carol");
  }
});
