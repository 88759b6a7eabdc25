import { STORE_FORMAT_VERSION, type JobShare } from "@codemux/core";
import type { Redis } from "ioredis";
import type { RedisConnection } from "./connection";
import { StoreFormatError } from "./errors";
import type { InstanceRegistry } from "./instances";

/** Jobs listed per principal at most: the oldest go first past it. */
const MAX_LISTED = 1_000;

/**
 * Job records in Redis (`<prefix>job:<id>`, each listed in `<prefix>jobs:<principal>` by creation
 * time, both expiring with the job's retention) and cancels on a pub/sub channel, which the
 * instance running the job hears. An instance is alive while its registration beats.
 */
export class RedisJobShare implements JobShare {
  readonly instanceId: string;
  readonly #redis: RedisConnection;
  readonly #registry: InstanceRegistry;
  readonly #channel: string;
  #subscriber: Redis | undefined;

  constructor(redis: RedisConnection, registry: InstanceRegistry) {
    this.#redis = redis;
    this.#registry = registry;
    this.instanceId = registry.self;
    this.#channel = `${redis.prefix}jobs:cancel`;
  }

  async put(job: { id: string; principal: string; createdAt: number; record: string; ttlMs: number }): Promise<void> {
    const key = this.#jobKey(job.id);
    const index = this.#indexKey(job.principal);
    const value = JSON.stringify({ v: STORE_FORMAT_VERSION, record: job.record });
    await this.#redis.run(`save job ${job.id} in Redis`, (client) =>
      client
        .multi()
        .set(key, value, "PX", job.ttlMs)
        .zadd(index, job.createdAt, job.id)
        .zremrangebyrank(index, 0, -MAX_LISTED - 1)
        .pexpire(index, job.ttlMs)
        .exec(),
    );
  }

  async list(principal: string, limit: number): Promise<string[]> {
    const ids = await this.#redis.run("list jobs in Redis", (client) => client.zrevrange(this.#indexKey(principal), 0, Math.max(0, limit - 1)));
    if (ids.length === 0) return [];
    const values = await this.#redis.run("read jobs from Redis", (client) => client.mget(...ids.map((id) => this.#jobKey(id))));
    return values.flatMap((text, i) => {
      if (text === null) return [];
      const entry = JSON.parse(text) as { v?: unknown; record?: unknown };
      if (entry.v !== STORE_FORMAT_VERSION) throw new StoreFormatError(this.#jobKey(ids[i] as string), String(entry.v), STORE_FORMAT_VERSION);
      return typeof entry.record === "string" ? [entry.record] : [];
    });
  }

  /** Deletes `principal`'s job records and their index (`codemux forget`); resolves with how many records went. */
  async forget(principal: string): Promise<number> {
    const index = this.#indexKey(principal);
    const ids = await this.#redis.run("list jobs in Redis", (client) => client.zrevrange(index, 0, -1));
    const keys = ids.map((id) => this.#jobKey(id));
    const deleted = keys.length > 0 ? await this.#redis.run(`delete the jobs of ${principal} in Redis`, (client) => client.del(...keys)) : 0;
    await this.#redis.run(`delete the job list of ${principal} in Redis`, (client) => client.del(index));
    return deleted;
  }

  async cancel(id: string, by: string): Promise<void> {
    await this.#redis.run(`ask for the cancel of ${id} in Redis`, (client) => client.publish(this.#channel, JSON.stringify({ id, by })));
  }

  onCancel(handler: (id: string, by: string) => void): void {
    // A client in subscriber mode takes no other commands: its own connection, subscribed at each (re)connect.
    const subscriber = this.#redis.client.duplicate();
    this.#subscriber = subscriber;
    subscriber.on("error", () => undefined);
    subscriber.on("message", (_channel, text) => {
      try {
        const { id, by } = JSON.parse(text) as { id?: unknown; by?: unknown };
        if (typeof id === "string") handler(id, typeof by === "string" ? by.slice(0, 20) : "tool");
      } catch {
        // Not one of ours: ignored.
      }
    });
    subscriber.on("ready", () => void subscriber.subscribe(this.#channel).catch(() => undefined));
  }

  async alive(instanceId: string): Promise<boolean> {
    return (await this.#registry.addressOf(instanceId)) !== undefined;
  }

  async close(): Promise<void> {
    await this.#subscriber?.quit().catch(() => this.#subscriber?.disconnect());
  }

  #jobKey(id: string): string {
    return `${this.#redis.prefix}job:${id}`;
  }

  #indexKey(principal: string): string {
    return `${this.#redis.prefix}jobs:${principal}`;
  }
}
