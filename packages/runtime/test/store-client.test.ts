import { RedisConnection, parseStoreSetting } from "@codemux/redis";
import { freePort, haveProgram, startRedisServer, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStoreClient } from "../src/shared-state";

const unreachable = (where: string, reason: string) => `Redis at ${where} is not reachable (${reason})`;

describe("the store client of one-shot commands", () => {
  it("fails at Redis's refusal, not at the end of its wait", async () => {
    const setting = parseStoreSetting(`redis://127.0.0.1:${await freePort()}`, undefined);
    // A ten-minute bound: only the refusal itself can end this within the test's timeout.
    await expect(openStoreClient(setting, { unreachable, waitMs: 600_000 })).rejects.toThrow(/is not reachable \(ECONNREFUSED\)/);
  }, 30_000);

  describe.skipIf(!haveProgram("redis-server", "redis-server"))("with Redis up", () => {
    let redis: RedisServer;
    let watcher: RedisConnection;
    const clients = async () =>
      String(await watcher.client.client("LIST"))
        .trim()
        .split("\n").length;

    beforeAll(async () => {
      redis = await startRedisServer();
      watcher = await RedisConnection.open({ url: redis.url, prefix: "codemux:" });
      await watcher.ready(10_000);
    }, 30_000);
    afterAll(async () => {
      await watcher?.close();
      await redis?.stop();
    });

    it("opens one connection, and the job queue only when a job is taken out", async () => {
      const before = await clients();
      const store = await openStoreClient(parseStoreSetting(redis.url, undefined), { unreachable });
      try {
        expect(await store.skillShelf?.of("token:alice")).toEqual(new Map());
        expect(await store.pinRecords?.all()).toEqual(new Map());
        expect(await clients()).toBe(before + 1);
        await store.jobQueue?.remove("job_000000000000");
        expect(await clients()).toBeGreaterThan(before + 1);
      } finally {
        await store.close();
      }
    }, 30_000);
  });
});
