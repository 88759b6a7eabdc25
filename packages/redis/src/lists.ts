import type { SharedLists } from "@codemux/core";
import type { RedisConnection } from "./connection";
import { ownerHash } from "./lua";
import { unversioned, versioned } from "./versioned";

/** A list changed without a TTL expires this long after its last change all the same (every key is bounded). */
const DEFAULT_TTL_MS = 30 * 24 * 3_600_000;

/**
 * SharedLists in Redis: one list per owner (`<prefix>list:<name>:<hash of the owner>`), each item its
 * format version and text; an item is pushed, the list cut to its bound and its expiry renewed in one MULTI.
 */
export class RedisLists implements SharedLists {
  readonly #redis: RedisConnection;
  readonly #base: string;
  readonly #name: string;

  /** `name` says what the lists hold (`memories`), in their keys and in errors. */
  constructor(redis: RedisConnection, options: { name: string }) {
    this.#redis = redis;
    this.#name = options.name;
    this.#base = `${redis.prefix}list:${options.name}:`;
  }

  async push(owner: string, item: string, options: { max: number; ttlMs?: number }): Promise<void> {
    const key = this.#key(owner);
    const ttlMs = Math.max(1, Math.round(options.ttlMs ?? DEFAULT_TTL_MS));
    await this.#redis.run(`keep ${this.#name} in Redis`, (client) =>
      client
        .multi()
        .lpush(key, versioned(item))
        .ltrim(key, 0, Math.max(1, options.max) - 1)
        .pexpire(key, ttlMs)
        .exec(),
    );
  }

  async read(owner: string, limit: number): Promise<string[]> {
    const key = this.#key(owner);
    const items = await this.#redis.run(`read ${this.#name} from Redis`, (client) => client.lrange(key, 0, Math.max(1, limit) - 1));
    return items.map((item) => unversioned(key, item));
  }

  async clear(owner: string): Promise<number> {
    const key = this.#key(owner);
    const replies = await this.#redis.run(`delete ${this.#name} in Redis`, (client) => client.multi().llen(key).del(key).exec());
    return Number(replies?.[0]?.[1] ?? 0);
  }

  /** Named by a hash of the owner: any principal, never a pattern or a separator in the key. */
  #key(owner: string): string {
    return `${this.#base}${ownerHash(owner)}`;
  }
}
