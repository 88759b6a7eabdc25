import { STORE_FORMAT_VERSION } from "@codemux/core";
import { haveProgram, startRedisServer, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstanceRegistry, RedisConnection, RedisJobShare, StoreFormatError } from "../src/index";

const haveRedis = haveProgram("redis-server", "redis-server");

describe.skipIf(!haveRedis)("job transcripts and large results in Redis, against a real redis-server", () => {
  let redis: RedisServer;
  const closers: Array<{ close(): Promise<void> }> = [];
  /** One connection and share per simulated instance, as each codemux process has its own. */
  const instance = async (id: string) => {
    const connection = await RedisConnection.open({ url: redis.url, prefix: "codemux:" });
    expect(await connection.ready(5000)).toBe(true);
    const share = new RedisJobShare(connection, new InstanceRegistry(connection, { id }));
    closers.push(share, connection);
    return { connection, share };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const closer of closers.reverse()) await closer.close();
    await redis?.stop();
  });

  it("shows a transcript written by one instance to its owner on another, in order, and to no one else", async () => {
    const a = await instance("a");
    const b = await instance("b");
    for (const seq of [0, 1, 2])
      await a.share.appendTranscript({ id: "job_t1", principal: "token:alice", line: `{"seq":${seq}}`, maxBytes: 1_000, ttlMs: 60_000 });
    expect(await b.share.transcript("job_t1", "token:alice")).toEqual(['{"seq":0}', '{"seq":1}', '{"seq":2}']);
    expect(await b.share.transcript("job_t1", "token:bob")).toEqual([]);
    expect(await b.share.transcript("job_none", "token:alice")).toEqual([]);
  });

  it("keeps only a transcript's newest lines within its byte bound", async () => {
    const a = await instance("a");
    const line = (n: number) => `{"seq":${n},"pad":"${"x".repeat(80)}"}`;
    for (let n = 0; n < 10; n++) await a.share.appendTranscript({ id: "job_t2", principal: "p", line: line(n), maxBytes: line(0).length * 3, ttlMs: 60_000 });
    expect(await a.share.transcript("job_t2", "p")).toEqual([line(7), line(8), line(9)]);
    expect(Number(await a.connection.client.hget("codemux:job:job_t2:transcript-meta", "b"))).toBe(line(0).length * 3);
  });

  it("keeps a large result for its owner only, and lets the transcript and the result expire with the job's record", async () => {
    const a = await instance("a");
    const b = await instance("b");
    const result = JSON.stringify({ content: [{ type: "text", text: "y".repeat(300_000) }] });
    await a.share.appendTranscript({ id: "job_t3", principal: "token:alice", line: "{}", maxBytes: 1_000, ttlMs: 600_000 });
    await a.share.putResult({ id: "job_t3", principal: "token:alice", result, ttlMs: 600_000 });
    expect(await b.share.result("job_t3", "token:alice")).toBe(result);
    expect(await b.share.result("job_t3", "token:bob")).toBeUndefined();
    expect(await b.share.result("job_none", "token:alice")).toBeUndefined();
    // The record's put renews the companions' expiry to its own.
    await a.share.put({ id: "job_t3", principal: "token:alice", createdAt: 1, record: "{}", ttlMs: 5_000 });
    for (const key of ["codemux:job:job_t3:transcript", "codemux:job:job_t3:transcript-meta", "codemux:job:job_t3:result"]) {
      const left = await a.connection.client.pttl(key);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(5_000);
    }
  });

  it("refuses a transcript or result of another format with a sentence naming the key", async () => {
    const a = await instance("a");
    await a.connection.client.hset("codemux:job:job_t4:transcript-meta", { v: "999", o: "p" });
    await a.connection.client.hset("codemux:job:job_t4:result", { v: "999", o: "p", d: "{}" });
    const transcript = await a.share.transcript("job_t4", "p").catch((error: unknown) => error);
    expect(StoreFormatError.isInstance(transcript)).toBe(true);
    expect((transcript as Error).message).toContain(
      `Redis holds codemux:job:job_t4:transcript in format 999, which this codemux (format ${STORE_FORMAT_VERSION})`,
    );
    const result = await a.share.result("job_t4", "p").catch((error: unknown) => error);
    expect((result as Error).message).toContain("Redis holds codemux:job:job_t4:result in format 999");
  });
});
