// Two instances share a kept entry and one rate limit through Redis: run with `node examples/two-instances.mjs` after `pnpm build` (needs redis-server).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisBuckets, RedisConnection, RedisStore } from "@codemux/redis";

// A throwaway redis-server on a free port, persisting every write as the docs require.
const probe = createServer().listen(0, "127.0.0.1");
await once(probe, "listening");
const { port } = probe.address();
probe.close();
const dir = await mkdtemp(join(tmpdir(), "codemux-redis-example-"));
const redis = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir]);

const url = `redis://127.0.0.1:${port}`;
const a = await RedisConnection.open({ url, prefix: "example:" });
const b = await RedisConnection.open({ url, prefix: "example:" });
await Promise.all([a.ready(5000), b.ready(5000)]);

// Written on instance A, read on instance B by its owner; another owner sees nothing.
await new RedisStore(a, { name: "results" }).write("res_0123456789ab", "a large result", { owner: "alice", ttlMs: 60_000 });
const onB = new RedisStore(b, { name: "results" });
console.log(await onB.read("res_0123456789ab", { owner: "alice" }), await onB.read("res_0123456789ab", { owner: "bob" }));

// 3 calls an hour, asked 4 times on each instance: 3 pass in all.
const rate = { capacity: 3, calls: 3, perMs: 3_600_000 };
const asks = [a, b].flatMap((connection) => Array.from({ length: 4 }, () => new RedisBuckets(connection).takeAll([{ key: "alice", rate }], Date.now())));
console.log((await Promise.all(asks)).filter((verdict) => verdict.waitMs === 0).length, "of 8 calls passed");

await a.client.flushdb();
await Promise.all([a.close(), b.close()]);
redis.kill();
await once(redis, "exit");
await rm(dir, { recursive: true, force: true });
