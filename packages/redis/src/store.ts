import { STORE_FORMAT_VERSION, STORE_KEY_PATTERN, listed, visible, type Store, type StoreEntry, type StoreWriteOptions } from "@codemux/core";
import type { RedisConnection } from "./connection";
import { StoreFormatError } from "./errors";

export interface RedisStoreOptions {
  /** What this store holds (`results`, `cache`): its keys are `<prefix>store:<name>:<key>`. */
  name: string;
  /** Entries written without a TTL expire after this all the same (every key is bounded); 30 days by default. */
  maxTtlMs?: number;
  now?: () => number;
}

const DEFAULT_MAX_TTL_MS = 30 * 24 * 3_600_000;
/** Keys a `list` or `clear` walks at most: a bound on the work one call does. */
const MAX_LISTED = 10_000;

/**
 * A Store in Redis, shared by every instance of a deployment: one hash per entry (format version, data,
 * owner, times), written in one MULTI so a reader sees all of it or none, expiring by Redis's own TTL.
 * The owner check is the Store contract's, made after the read: another owner's entry is "missing".
 */
export class RedisStore implements Store {
  readonly shared = true;
  readonly #redis: RedisConnection;
  readonly #base: string;
  readonly #maxTtlMs: number;
  readonly #now: () => number;

  constructor(redis: RedisConnection, options: RedisStoreOptions) {
    this.#redis = redis;
    this.#base = `${redis.prefix}store:${options.name}:`;
    this.#maxTtlMs = options.maxTtlMs ?? DEFAULT_MAX_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  async write(key: string, data: string, options: StoreWriteOptions = {}): Promise<StoreEntry> {
    const redisKey = this.#key(key);
    const now = this.#now();
    const ttlMs = Math.max(1, Math.min(options.ttlMs ?? this.#maxTtlMs, this.#maxTtlMs));
    const entry: StoreEntry = {
      key,
      bytes: new TextEncoder().encode(data).byteLength,
      createdAt: now,
      ...(options.ttlMs !== undefined ? { expiresAt: now + ttlMs } : {}),
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
    };
    const fields: Record<string, string> = { v: String(STORE_FORMAT_VERSION), d: data, b: String(entry.bytes), c: String(now) };
    if (entry.expiresAt !== undefined) fields.e = String(entry.expiresAt);
    if (entry.owner !== undefined) fields.o = entry.owner;
    await this.#redis.run(`keep ${key} in Redis`, (client) => client.multi().del(redisKey).hset(redisKey, fields).pexpire(redisKey, ttlMs).exec());
    return entry;
  }

  async read(key: string, options: { owner?: string } = {}): Promise<string | undefined> {
    return (await this.#get(key, options.owner))?.data;
  }

  async stat(key: string, options: { owner?: string } = {}): Promise<StoreEntry | undefined> {
    return (await this.#get(key, options.owner))?.entry;
  }

  async list(options: { owner?: string } = {}): Promise<StoreEntry[]> {
    const keys = await this.#keys();
    const now = this.#now();
    const entries: StoreEntry[] = [];
    for (const redisKey of keys) {
      const fields = await this.#redis.run("list entries in Redis", (client) => client.hmget(redisKey, "v", "b", "c", "e", "o"));
      const [v, b, c, e, o] = fields;
      if (v === null || v === undefined) continue;
      if (v !== String(STORE_FORMAT_VERSION)) throw new StoreFormatError(redisKey, v, STORE_FORMAT_VERSION);
      const entry = entryOf(redisKey.slice(this.#base.length), { b, c, e, o });
      if (listed(entry, options.owner, now)) entries.push(entry);
    }
    return entries.sort((a, b) => a.createdAt - b.createdAt);
  }

  async delete(key: string): Promise<void> {
    await this.remove(key);
  }

  /** Deletes an entry; true when this call deleted it (false when it was gone: another instance deleted it first). */
  async remove(key: string): Promise<boolean> {
    return (await this.#redis.run(`delete ${key} in Redis`, (client) => client.del(this.#key(key)))) === 1;
  }

  /** Deletes every entry of this store's name, on every instance: for `codemux store` housekeeping, never at an instance's close. */
  async clear(): Promise<void> {
    const keys = await this.#keys();
    if (keys.length > 0) await this.#redis.run("clear entries in Redis", (client) => client.del(...keys));
  }

  async #get(key: string, owner: string | undefined): Promise<{ entry: StoreEntry; data: string } | undefined> {
    if (!STORE_KEY_PATTERN.test(key)) return undefined;
    const redisKey = this.#key(key);
    const fields = await this.#redis.run(`read ${key} from Redis`, (client) => client.hgetall(redisKey));
    if (fields.v === undefined) return undefined;
    if (fields.v !== String(STORE_FORMAT_VERSION)) throw new StoreFormatError(redisKey, fields.v, STORE_FORMAT_VERSION);
    const entry = entryOf(key, fields);
    if (!visible(entry, owner, this.#now()) || fields.d === undefined) return undefined;
    return { entry, data: fields.d };
  }

  async #keys(): Promise<string[]> {
    const found: string[] = [];
    let cursor = "0";
    do {
      const [next, keys] = await this.#redis.run("list entries in Redis", (client) => client.scan(cursor, "MATCH", `${this.#base}*`, "COUNT", 500));
      cursor = next;
      found.push(...keys);
    } while (cursor !== "0" && found.length < MAX_LISTED);
    return found.slice(0, MAX_LISTED);
  }

  #key(key: string): string {
    if (!STORE_KEY_PATTERN.test(key)) throw new TypeError(`Store keys are names, not paths: ${JSON.stringify(key.slice(0, 100))}`);
    return this.#base + key;
  }
}

function entryOf(key: string, fields: { b?: string | null; c?: string | null; e?: string | null; o?: string | null }): StoreEntry {
  return {
    key,
    bytes: Number(fields.b ?? 0),
    createdAt: Number(fields.c ?? 0),
    ...(fields.e ? { expiresAt: Number(fields.e) } : {}),
    ...(fields.o ? { owner: fields.o } : {}),
  };
}
