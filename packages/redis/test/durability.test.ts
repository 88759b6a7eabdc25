import { haveProgram, startRedisServer } from "@codemux/test-servers";
import { describe, expect, it } from "vitest";
import { RedisConnection } from "../src/index";

const haveRedis = haveProgram("redis-server", "redis-server");

describe.skipIf(!haveRedis)("whether Redis persists every write before it answers", () => {
  it("says so for appendfsync everysec, which can lose the last second of acknowledged writes when Redis is killed; nothing for always", async () => {
    for (const appendfsync of ["everysec", "always"] as const) {
      const redis = await startRedisServer({ appendfsync });
      const connection = await RedisConnection.open({ url: redis.url, prefix: "durability:" });
      try {
        expect(await connection.ready(5000)).toBe(true);
        const warning = await connection.durability();
        if (appendfsync === "always") expect(warning).toBeUndefined();
        else expect(warning).toMatch(/runs with appendfsync everysec: .* can be lost\. Run it with appendonly yes and appendfsync always/);
      } finally {
        await connection.close();
        await redis.stop();
      }
    }
  });
});
