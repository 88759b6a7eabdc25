import type { SharedSlots } from "@codemux/core";
import type { RedisConnection } from "./connection";
import { luaScript } from "./lua";

/**
 * Drops the places whose lease ran out, then takes one for ARGV[1] when fewer than ARGV[2] are held, with a
 * lease of ARGV[3] ms: in one script, so two instances taking at once never both get the last place. Time is
 * Redis's own clock (TIME), which every instance shares.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if held >= tonumber(ARGV[2]) then return {0, held} end
  held = held + 1
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return {1, held}
`;
/** Renews each place KEYS[i] / ARGV[i + 1] still held (lease ARGV[1] ms); returns the indexes (1-based) of those that are not. */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
local gone = {}
for i = 1, #KEYS do
  local until_ = redis.call('ZSCORE', KEYS[i], ARGV[i + 1])
  if until_ and tonumber(until_) > now then
    redis.call('ZADD', KEYS[i], 'XX', now + lease, ARGV[i + 1])
    redis.call('PEXPIRE', KEYS[i], lease)
  else
    gone[#gone + 1] = i
  end
end
return gone
`;
const TAKE_SCRIPT = luaScript(TAKE);
const RENEW_SCRIPT = luaScript(RENEW);

/** Places in Redis (`<prefix>slots:<key>`, a sorted set of holders by lease end) shared by every instance. */
export class RedisSlots implements SharedSlots {
  readonly #redis: RedisConnection;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
  }

  async take(key: string, holder: string, { max, leaseMs }: { max: number; leaseMs: number }): Promise<{ taken: boolean; held: number }> {
    const reply = (await this.#redis.script("count the jobs at once in Redis", TAKE_SCRIPT, {
      keys: [this.#key(key)],
      args: [holder, String(max), String(Math.max(1, Math.ceil(leaseMs)))],
    })) as [number, number];
    return { taken: reply[0] === 1, held: Number(reply[1]) };
  }

  async renew(places: ReadonlyArray<{ key: string; holder: string }>, leaseMs: number): Promise<Array<{ key: string; holder: string }>> {
    if (places.length === 0) return [];
    const gone = (await this.#redis.script("renew the jobs at once in Redis", RENEW_SCRIPT, {
      keys: places.map((place) => this.#key(place.key)),
      args: [String(Math.max(1, Math.ceil(leaseMs))), ...places.map((place) => place.holder)],
    })) as number[];
    return gone.flatMap((index) => places[index - 1] ?? []);
  }

  async release(key: string, holder: string): Promise<void> {
    await this.#redis.run("give back a job's place in Redis", (client) => client.zrem(this.#key(key), holder));
  }

  #key(key: string): string {
    return `${this.#redis.prefix}slots:${key}`;
  }
}
