import type { ShelfPut, ShelvedSkill, SkillShelf } from "@codemux/core";
import { createHash } from "node:crypto";
import type { RedisConnection } from "./connection";
import { luaScript, ownerHash } from "./lua";
import { unversioned, versioned } from "./versioned";

/**
 * Saves a skill only if its field still holds the expected value (compared by SHA-1; "" for absent) and,
 * when new, the principal has room; then lists the principal and tells every instance. One script, so no
 * other instance's save comes between the check and the write.
 */
const PUT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '' then
  if current then return 'changed' end
  if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return 'full' end
elseif (not current) or redis.sha1hex(current) ~= ARGV[2] then
  return 'changed'
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[5])
return 'saved'
`;
/** Deletes one skill (ARGV[1]) or, without a name, all of them; unlists an empty principal and tells every instance. */
const DELETE = `
local gone
if ARGV[1] == '' then
  gone = redis.call('HLEN', KEYS[1])
  redis.call('DEL', KEYS[1])
else
  gone = redis.call('HDEL', KEYS[1], ARGV[1])
end
if redis.call('HLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[2]) end
if gone > 0 then redis.call('PUBLISH', ARGV[3], ARGV[2]) end
return gone
`;
const PUT_SCRIPT = luaScript(PUT);
const DELETE_SCRIPT = luaScript(DELETE);

/** Principals read at start, at most (as the files store reads folders). */
const MAX_PRINCIPALS = 1_000;
/** Characters of a principal a change message may carry: longer ones are not ours. */
const MAX_PRINCIPAL_CHARS = 1_000;

/**
 * Saved skills in Redis: one hash per principal (`<prefix>skills:of:<hash of the principal>`, a field per
 * skill holding its format version and record), the set of principals that have some (`<prefix>skills:principals`),
 * and a change channel (`<prefix>skills:changed`) carrying the principal whose skills changed. Nothing
 * expires: a saved skill is kept until deleted, as in the files store.
 */
export class RedisSkillShelf implements SkillShelf {
  readonly #redis: RedisConnection;
  readonly #principals: string;
  readonly #channel: string;
  #subscriber: { close(): Promise<void> } | undefined;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
    this.#principals = `${redis.prefix}skills:principals`;
    this.#channel = `${redis.prefix}skills:changed`;
  }

  async all(): Promise<ShelvedSkill[]> {
    const principals: string[] = [];
    let cursor = "0";
    do {
      const [next, found] = await this.#redis.run("read the saved skills from Redis", (client) => client.sscan(this.#principals, cursor, "COUNT", 500));
      cursor = next;
      principals.push(...found);
    } while (cursor !== "0" && principals.length < MAX_PRINCIPALS);
    const skills: ShelvedSkill[] = [];
    for (const principal of principals.slice(0, MAX_PRINCIPALS))
      for (const [name, record] of await this.of(principal)) skills.push({ principal, name, record });
    return skills;
  }

  async of(principal: string): Promise<Map<string, string>> {
    const key = this.#key(principal);
    const fields = await this.#redis.run("read the saved skills from Redis", (client) => client.hgetall(key));
    return new Map(Object.entries(fields).map(([name, value]) => [name, unversioned(`${key} ${name}`, value)]));
  }

  async put({ principal, name, record }: ShelvedSkill, options: { expected: string | undefined; max: number }): Promise<ShelfPut> {
    const expected = options.expected === undefined ? "" : createHash("sha1").update(versioned(options.expected)).digest("hex");
    const args = [name, expected, versioned(record), String(options.max), principal, this.#channel];
    return (await this.#redis.script(`save skill "${name}" in Redis`, PUT_SCRIPT, { keys: [this.#key(principal), this.#principals], args })) as ShelfPut;
  }

  async delete(principal: string, name: string): Promise<boolean> {
    return (await this.#remove(`delete skill "${name}" in Redis`, principal, name)) > 0;
  }

  async forget(principal: string): Promise<number> {
    return await this.#remove("delete the saved skills in Redis", principal, "");
  }

  onChange(changed: (principal: string | undefined) => void): void {
    this.#subscriber = this.#redis.subscribe(this.#channel, {
      message: (principal) => {
        if (principal.length <= MAX_PRINCIPAL_CHARS) changed(principal);
      },
      // Changes made while this instance was not subscribed were not heard: read everything again.
      ready: () => changed(undefined),
    });
  }

  async close(): Promise<void> {
    await this.#subscriber?.close();
  }

  async #remove(what: string, principal: string, name: string): Promise<number> {
    const keys = [this.#key(principal), this.#principals];
    return Number(await this.#redis.script(what, DELETE_SCRIPT, { keys, args: [name, principal, this.#channel] }));
  }

  /** A principal's hash is named by a hash of the principal: any text, never a pattern or a separator in the key. */
  #key(principal: string): string {
    return `${this.#redis.prefix}skills:of:${ownerHash(principal)}`;
  }
}
