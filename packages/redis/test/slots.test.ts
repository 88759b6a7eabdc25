import { haveProgram, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisConnection, RedisSlots } from "../src/index";

describe.skipIf(!haveProgram("redis-server", "redis-server"))("places counted by every instance, against a real redis-server", () => {
  let redis: RedisServer;
  const connections: RedisConnection[] = [];
  /** One connection per simulated instance, as each codemux process has its own. */
  const instance = async () => {
    const connection = await RedisConnection.open({ url: redis.url, prefix: "codemux:" });
    expect(await connection.ready(5000)).toBe(true);
    connections.push(connection);
    return new RedisSlots(connection);
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const connection of connections) await connection.close();
    await redis?.stop();
  });

  it("never gives more than max places, however many instances take at once; a holder taking again keeps its one", async () => {
    const [a, b, c] = [await instance(), await instance(), await instance()];
    const takes = await Promise.all(Array.from({ length: 30 }, (_, i) => [a, b, c][i % 3]?.take("jobs:token:dave", `job_${i}`, { max: 3, leaseMs: 60_000 })));
    expect(takes.filter((take) => take?.taken)).toHaveLength(3);
    expect(takes.filter((take) => !take?.taken).every((take) => take?.held === 3)).toBe(true);
    const holder = `job_${takes.findIndex((take) => take?.taken)}`;
    expect(await b.take("jobs:token:dave", holder, { max: 3, leaseMs: 60_000 })).toEqual({ taken: true, held: 3 });
    // Another key counts apart.
    expect((await a.take("jobs:token:erin", "job_x", { max: 1, leaseMs: 60_000 })).taken).toBe(true);
  });

  it("frees a place given back from any instance, and one whose lease ran out (its instance died); renewing says which are gone", async () => {
    const [a, b] = [await instance(), await instance()];
    await a.take("jobs:token:frank", "job_1", { max: 2, leaseMs: 60_000 });
    await a.take("jobs:token:frank", "job_2", { max: 2, leaseMs: 200 });
    expect((await b.take("jobs:token:frank", "job_3", { max: 2, leaseMs: 60_000 })).taken).toBe(false);
    await b.release("jobs:token:frank", "job_1");
    expect(
      await a.renew(
        [
          { key: "jobs:token:frank", holder: "job_1" },
          { key: "jobs:token:frank", holder: "job_2" },
        ],
        60_000,
      ),
    ).toEqual([{ key: "jobs:token:frank", holder: "job_1" }]);
    // job_2's lease was renewed; once it runs out unrenewed, its place is free.
    await a.take("jobs:token:frank", "job_2", { max: 2, leaseMs: 100 });
    await until(async () => (await b.take("jobs:token:frank", "job_3", { max: 1, leaseMs: 60_000 })).taken);
    expect(await a.renew([{ key: "jobs:token:frank", holder: "job_2" }], 60_000)).toEqual([{ key: "jobs:token:frank", holder: "job_2" }]);
  });
});
