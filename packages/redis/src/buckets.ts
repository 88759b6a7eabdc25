import { STORE_FORMAT_VERSION, type BucketRequest, type RateBuckets } from "@codemux/core";
import type { RedisConnection } from "./connection";
import { luaScript } from "./lua";
import { StoreFormatError } from "./errors";

/**
 * Checks every bucket, then spends one token of each only when all hold one: in one script, so no
 * other instance's call comes between the check and the spend. Time is Redis's own clock (TIME), so
 * instances whose clocks differ still share one rate. A bucket lives until it would be full again.
 */
const TAKE_ALL = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tokens = {}
local worst, worstWait = 0, 0
for i = 1, #KEYS do
  local cap, rate = tonumber(ARGV[i * 3 - 2]), tonumber(ARGV[i * 3 - 1]) / tonumber(ARGV[i * 3])
  local b = redis.call('HMGET', KEYS[i], 'v', 't', 'u')
  if b[1] and b[1] ~= ARGV[#ARGV] then return {-1, b[1], KEYS[i]} end
  local tk = cap
  if b[2] then tk = math.min(cap, tonumber(b[2]) + math.max(0, now - tonumber(b[3])) * rate) end
  tokens[i] = tk
  if tk < 1 then
    local wait = math.ceil((1 - tk) / rate)
    if wait > worstWait then worst, worstWait = i, wait end
  end
end
if worst > 0 then return {worst, worstWait} end
for i = 1, #KEYS do
  local cap, rate = tonumber(ARGV[i * 3 - 2]), tonumber(ARGV[i * 3 - 1]) / tonumber(ARGV[i * 3])
  redis.call('HSET', KEYS[i], 'v', ARGV[#ARGV], 't', string.format('%.17g', tokens[i] - 1), 'u', now)
  redis.call('PEXPIRE', KEYS[i], math.ceil(cap / rate) + 1000)
end
return {0, 0}
`;
const TAKE_ALL_SCRIPT = luaScript(TAKE_ALL);

/** Token buckets in Redis shared by every instance: N instances together let through no more than the limit. */
export class RedisBuckets implements RateBuckets {
  readonly #redis: RedisConnection;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
  }

  /** `now` is ignored: Redis's clock is the one every instance shares. */
  async takeAll(requests: BucketRequest[], _now: number): Promise<{ refused?: number; waitMs: number }> {
    if (requests.length === 0) return { waitMs: 0 };
    const keys = requests.map((r) => `${this.#redis.prefix}bucket:${r.key}`);
    const args = [...requests.flatMap((r) => [r.rate.capacity, r.rate.calls, r.rate.perMs].map(String)), String(STORE_FORMAT_VERSION)];
    const reply = (await this.#redis.script("check the shared rate limit in Redis", TAKE_ALL_SCRIPT, { keys, args })) as [number, number | string, string?];
    const [index, value, key] = reply;
    if (index === -1) throw new StoreFormatError(key ?? "a rate-limit bucket", String(value), STORE_FORMAT_VERSION);
    return index === 0 ? { waitMs: 0 } : { refused: index - 1, waitMs: Number(value) };
  }
}
