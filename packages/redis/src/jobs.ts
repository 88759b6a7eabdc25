import { STORE_FORMAT_VERSION, type JobShare } from "@codemux/core";
import type { RedisConnection } from "./connection";
import { luaScript } from "./lua";
import { StoreFormatError } from "./errors";
import type { InstanceRegistry } from "./instances";

/** Jobs listed per principal at most: the oldest go first past it. */
const MAX_LISTED = 1_000;

/**
 * Appends a transcript line and drops the oldest lines past the byte bound, in one script: the list
 * (KEYS[1]) and its owner, format and byte count (KEYS[2]) never disagree, whichever instance reads.
 */
const APPEND = `
redis.call('HSET', KEYS[2], 'o', ARGV[4], 'v', ARGV[5])
redis.call('RPUSH', KEYS[1], ARGV[1])
local total = redis.call('HINCRBY', KEYS[2], 'b', string.len(ARGV[1]))
while total > tonumber(ARGV[2]) do
  local gone = redis.call('LPOP', KEYS[1])
  if not gone then break end
  total = redis.call('HINCRBY', KEYS[2], 'b', -string.len(gone))
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return total
`;
const APPEND_SCRIPT = luaScript(APPEND);

/**
 * Job records in Redis (`<prefix>job:<id>`, each listed in `<prefix>jobs:<principal>` by creation
 * time, both expiring with the job's retention) and cancels on a pub/sub channel, which the
 * instance running the job hears. An instance is alive while its registration beats. A job's
 * transcript (`<prefix>job:<id>:transcript`, a list, with its owner and size in `...:transcript-meta`)
 * and a result too large for its record (`<prefix>job:<id>:result`) expire with the record.
 */
export class RedisJobShare implements JobShare {
  readonly instanceId: string;
  readonly #redis: RedisConnection;
  readonly #registry: InstanceRegistry;
  readonly #channel: string;
  #subscriber: { close(): Promise<void> } | undefined;

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
    await this.#redis.run(
      `save job ${job.id} in Redis`,
      (client) =>
        client
          .multi()
          .set(key, value, "PX", job.ttlMs)
          .zadd(index, job.createdAt, job.id)
          .zremrangebyrank(index, 0, -MAX_LISTED - 1)
          .pexpire(index, job.ttlMs)
          // The transcript and a large result live as long as the record (no-ops for keys not there).
          .pexpire(`${key}:transcript`, job.ttlMs)
          .pexpire(`${key}:transcript-meta`, job.ttlMs)
          .pexpire(`${key}:result`, job.ttlMs)
          .exec(),
      { name: "redis save job", attributes: { "db.operation.name": "save job", "codemux.job": job.id } },
    );
  }

  async appendTranscript(entry: { id: string; principal: string; line: string; maxBytes: number; ttlMs: number }): Promise<void> {
    const key = this.#jobKey(entry.id);
    await this.#redis.script(`save the transcript of ${entry.id} in Redis`, APPEND_SCRIPT, {
      keys: [`${key}:transcript`, `${key}:transcript-meta`],
      args: [entry.line, String(entry.maxBytes), String(Math.max(1, entry.ttlMs)), entry.principal, String(STORE_FORMAT_VERSION)],
    });
  }

  async transcript(id: string, principal: string): Promise<string[]> {
    const key = this.#jobKey(id);
    const [meta, lines] = await this.#redis.run(`read the transcript of ${id} from Redis`, async (client) => {
      const replies = (await client.multi().hmget(`${key}:transcript-meta`, "v", "o").lrange(`${key}:transcript`, 0, -1).exec()) ?? [];
      return [replies[0]?.[1] as Array<string | null>, replies[1]?.[1] as string[]] as const;
    });
    if (!meta || meta[0] === null || meta[0] === undefined) return [];
    if (meta[0] !== String(STORE_FORMAT_VERSION)) throw new StoreFormatError(`${key}:transcript`, meta[0], STORE_FORMAT_VERSION);
    // Another principal's transcript is as absent as a missing one.
    return meta[1] === principal ? (lines ?? []) : [];
  }

  async putResult(entry: { id: string; principal: string; result: string; ttlMs: number }): Promise<void> {
    const key = `${this.#jobKey(entry.id)}:result`;
    const fields = { v: String(STORE_FORMAT_VERSION), o: entry.principal, d: entry.result };
    await this.#redis.run(`save the result of ${entry.id} in Redis`, (client) =>
      client.multi().del(key).hset(key, fields).pexpire(key, Math.max(1, entry.ttlMs)).exec(),
    );
  }

  async result(id: string, principal: string): Promise<string | undefined> {
    const key = `${this.#jobKey(id)}:result`;
    const [v, owner, data] = await this.#redis.run(`read the result of ${id} from Redis`, (client) => client.hmget(key, "v", "o", "d"));
    if (v === null || v === undefined) return undefined;
    if (v !== String(STORE_FORMAT_VERSION)) throw new StoreFormatError(key, v, STORE_FORMAT_VERSION);
    return owner === principal && typeof data === "string" ? data : undefined;
  }

  async list(principal: string, limit: number): Promise<string[]> {
    const ids = await this.#redis.run("list jobs in Redis", (client) => client.zrevrange(this.#indexKey(principal), 0, Math.max(0, limit - 1)));
    if (ids.length === 0) return [];
    const values = await this.#redis.run("read jobs from Redis", (client) => client.mget(...ids.map((id) => this.#jobKey(id))));
    return values.flatMap((text, i) => this.#recordOf(ids[i] as string, text) ?? []);
  }

  /** Job `id`'s record (JSON), or undefined when there is none: one read, for routing a request to the instance running it. */
  async get(id: string): Promise<string | undefined> {
    const span = { name: "redis read job", attributes: { "db.operation.name": "read job", "codemux.job": id } };
    return this.#recordOf(id, await this.#redis.run(`read job ${id} from Redis`, (client) => client.get(this.#jobKey(id)), span));
  }

  #recordOf(id: string, text: string | null | undefined): string | undefined {
    if (text === null || text === undefined) return undefined;
    const entry = JSON.parse(text) as { v?: unknown; record?: unknown };
    if (entry.v !== STORE_FORMAT_VERSION) throw new StoreFormatError(this.#jobKey(id), String(entry.v), STORE_FORMAT_VERSION);
    return typeof entry.record === "string" ? entry.record : undefined;
  }

  /** Deletes `principal`'s job records with their transcripts and large results, and their index (`codemux forget`); resolves with how many records went. */
  async forget(principal: string): Promise<number> {
    const index = this.#indexKey(principal);
    const ids = await this.#redis.run("list jobs in Redis", (client) => client.zrevrange(index, 0, -1));
    const keys = ids.map((id) => this.#jobKey(id));
    // Their transcripts and large results go with them.
    const besides = ids.flatMap((id) => [`${this.#jobKey(id)}:transcript`, `${this.#jobKey(id)}:transcript-meta`, `${this.#jobKey(id)}:result`]);
    const deleted = keys.length > 0 ? await this.#redis.run(`delete the jobs of ${principal} in Redis`, (client) => client.del(...keys)) : 0;
    if (besides.length > 0) await this.#redis.run(`delete the transcripts and results of ${principal}'s jobs in Redis`, (client) => client.del(...besides));
    await this.#redis.run(`delete the job list of ${principal} in Redis`, (client) => client.del(index));
    return deleted;
  }

  async cancel(id: string, by: string): Promise<void> {
    await this.#redis.run(`ask for the cancel of ${id} in Redis`, (client) => client.publish(this.#channel, JSON.stringify({ id, by })));
  }

  onCancel(handler: (id: string, by: string) => void): void {
    this.#subscriber = this.#redis.subscribe(this.#channel, {
      message: (text) => {
        try {
          const { id, by } = JSON.parse(text) as { id?: unknown; by?: unknown };
          if (typeof id === "string") handler(id, typeof by === "string" ? by.slice(0, 20) : "tool");
        } catch {
          // Not one of ours: ignored.
        }
      },
    });
  }

  async alive(instanceId: string): Promise<boolean> {
    return (await this.#registry.addressOf(instanceId)) !== undefined;
  }

  async close(): Promise<void> {
    await this.#subscriber?.close();
  }

  #jobKey(id: string): string {
    return `${this.#redis.prefix}job:${id}`;
  }

  #indexKey(principal: string): string {
    return `${this.#redis.prefix}jobs:${principal}`;
  }
}
