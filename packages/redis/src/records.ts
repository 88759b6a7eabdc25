import type { RecordTable } from "@codemux/core";
import type { RedisConnection } from "./connection";
import { luaScript } from "./lua";
import { unversioned, versioned } from "./versioned";

/** Sets a field only if it still holds the expected value ("" for absent): one script, so no write comes between the check and the set. */
const SWAP = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`;
const SWAP_SCRIPT = luaScript(SWAP);

/** Records a table holds at most: a bound on what one `all` reads. */
const MAX_RECORDS = 10_000;

/**
 * A RecordTable in one Redis hash (`<prefix>records:<name>`), a field per record holding its format
 * version and text. Unlike the other keys it does not expire: pins forgotten would trust a changed tool afresh.
 */
export class RedisRecordTable implements RecordTable {
  readonly #redis: RedisConnection;
  readonly #key: string;

  constructor(redis: RedisConnection, options: { name: string }) {
    this.#redis = redis;
    this.#key = `${redis.prefix}records:${options.name}`;
  }

  async all(): Promise<Map<string, string>> {
    const records = new Map<string, string>();
    let cursor = "0";
    do {
      const [next, flat] = await this.#redis.run("read shared records from Redis", (client) => client.hscan(this.#key, cursor, "COUNT", 500), {
        name: "redis read records",
        attributes: { "db.operation.name": "read records", "db.collection.name": this.#key },
      });
      cursor = next;
      for (let i = 0; i + 1 < flat.length; i += 2) records.set(flat[i] as string, this.#decode(flat[i + 1] as string));
    } while (cursor !== "0" && records.size < MAX_RECORDS);
    return records;
  }

  async get(name: string): Promise<string | undefined> {
    const span = { name: "redis read record", attributes: { "db.operation.name": "read record", "db.collection.name": this.#key } };
    const value = await this.#redis.run(`read the shared record ${name} from Redis`, (client) => client.hget(this.#key, name), span);
    return value === null ? undefined : this.#decode(value);
  }

  async swap(name: string, expected: string | undefined, next: string): Promise<boolean> {
    const args = [name, expected === undefined ? "" : versioned(expected), versioned(next)];
    const span = { name: "redis swap record", attributes: { "db.operation.name": "swap record", "db.collection.name": this.#key } };
    return (await this.#redis.script(`change the shared record ${name} in Redis`, SWAP_SCRIPT, { keys: [this.#key], args, span })) === 1;
  }

  #decode(value: string): string {
    return unversioned(this.#key, value);
  }
}
