import { haveProgram, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisConnection, RedisJobQueue } from "../src/index";

const haveRedis = haveProgram("redis-server", "redis-server");

describe.skipIf(!haveRedis)("the shared job queue (BullMQ), against a real redis-server", () => {
  let redis: RedisServer;
  const closers: Array<{ close(): Promise<void> }> = [];
  /** One connection and queue per simulated instance, as each codemux process has its own. */
  const instance = async (prefix = "codemux:") => {
    const connection = await RedisConnection.open({ url: redis.url, prefix });
    expect(await connection.ready(5000)).toBe(true);
    const queue = await RedisJobQueue.open(connection);
    closers.push(queue, connection);
    return { connection, queue };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const closer of closers.reverse()) await closer.close();
    await redis?.stop();
  });

  it("hands a job queued by a full instance to an instance with room, with its payload, and never to the full one", async () => {
    const a = await instance();
    const b = await instance();
    const ranOn: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    a.queue.work({ concurrency: 1, hasRoom: () => false, run: async (id) => void ranOn.push(`a:${id}`) });
    await a.queue.add({ id: "job_00000000000a", payload: '{"kind":"call_tool"}' });
    const taken: Array<{ id: string; payload: string }> = [];
    b.queue.work({
      concurrency: 1,
      hasRoom: () => true,
      run: async (id, payload) => {
        taken.push({ id, payload });
        ranOn.push(`b:${id}`);
        await held;
      },
    });
    await until(() => taken.length === 1);
    expect(taken).toEqual([{ id: "job_00000000000a", payload: '{"kind":"call_tool"}' }]);
    // Taken and running on b: it can no longer be taken out of the queue.
    expect(await a.queue.remove("job_00000000000a")).toBe(false);
    release();
    expect(ranOn).toEqual(["b:job_00000000000a"]);
    // Ended on b and gone from the queue (BullMQ itself answers 1 for a job it no longer has): not taken out by a.
    await until(async () => (await a.connection.client.exists("codemux:queue:jobs:job_00000000000a")) === 0);
    expect(await a.queue.remove("job_00000000000a")).toBe(false);
  });

  it("takes a waiting job out of the queue (a cancel before any instance took it), so no instance runs it", async () => {
    const a = await instance("cancel-test:");
    await a.queue.add({ id: "job_00000000000b", payload: "{}" });
    expect(await a.queue.remove("job_00000000000b")).toBe(true);
    expect(await a.queue.remove("job_00000000000b")).toBe(false);
    expect(await a.queue.remove("job_never_queued")).toBe(false);
    const ran: string[] = [];
    const b = await instance("cancel-test:");
    b.queue.work({ concurrency: 1, hasRoom: () => true, run: async (id) => void ran.push(id) });
    await b.queue.add({ id: "job_00000000000c", payload: "{}" });
    await until(() => ran.length === 1);
    expect(ran).toEqual(["job_00000000000c"]);
  });

  it("starts taking once room frees up (roomChanged), and keeps its keys under the deployment's prefix", async () => {
    const a = await instance("room-test:");
    let room = false;
    const ran: string[] = [];
    a.queue.work({ concurrency: 2, hasRoom: () => room, run: async (id) => void ran.push(id) });
    await a.queue.add({ id: "job_00000000000d", payload: "{}" });
    const keys = await a.connection.client.keys("*job_00000000000d*");
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((key) => key.startsWith("room-test:queue:jobs:"))).toBe(true);
    room = true;
    a.queue.roomChanged();
    await until(() => ran.length === 1);
    expect(ran).toEqual(["job_00000000000d"]);
  });
});
