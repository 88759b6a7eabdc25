import { STORE_FORMAT_VERSION, type InstanceDirectory } from "@codemux/core";
import type { RedisConnection } from "./connection";

/** Instances listed at most: a deployment runs a handful. */
const MAX_LISTED = 1_000;

export interface InstanceRegistryOptions {
  /** This instance's id. */
  id: string;
  /** An instance not heard from for this long is gone; 15 s by default (it renews every third of it). */
  ttlMs?: number;
}

/**
 * This instance's entry in Redis (`<prefix>instance:<id>` = its address, with a TTL renewed by a
 * heartbeat), and the lookup of the others': how a request for a session held elsewhere finds its owner.
 */
export class InstanceRegistry implements InstanceDirectory {
  readonly self: string;
  readonly #redis: RedisConnection;
  #address = "";
  readonly #ttlMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(redis: RedisConnection, options: InstanceRegistryOptions) {
    this.#redis = redis;
    this.self = options.id;
    this.#ttlMs = options.ttlMs ?? 15_000;
  }

  /** Registers `address` (the base URL other instances reach this one at) now and keeps renewing; a failed beat (Redis down) is retried at the next one. */
  start(address: string): void {
    this.#address = address;
    const beat = () => void this.#beat().catch(() => undefined);
    beat();
    this.#timer = setInterval(beat, Math.max(100, Math.floor(this.#ttlMs / 3)));
    this.#timer.unref();
  }

  async addressOf(instanceId: string): Promise<string | undefined> {
    return addressIn(await this.#redis.run(`find codemux instance ${instanceId.slice(0, 40)} in Redis`, (client) => client.get(this.#key(instanceId))));
  }

  /** Every instance registered now (its heartbeat fresh), this one included, at most `MAX_LISTED`: ids and addresses. */
  async list(): Promise<Array<{ id: string; address: string }>> {
    const start = this.#key("");
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, found] = await this.#redis.run("list codemux instances in Redis", (client) => client.scan(cursor, "MATCH", `${start}*`, "COUNT", 500));
      cursor = next;
      keys.push(...found);
    } while (cursor !== "0" && keys.length < MAX_LISTED);
    const listed = keys.slice(0, MAX_LISTED);
    if (listed.length === 0) return [];
    const entries = await this.#redis.run("read codemux instances in Redis", (client) => client.mget(...listed));
    return listed.flatMap((key, i) => {
      const address = addressIn(entries[i]);
      return address === undefined ? [] : [{ id: key.slice(start.length), address }];
    });
  }

  /** Stops the heartbeat and removes the entry: requests for this instance's sessions are answered "gone" at once. Called at exit, after the drain. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#redis.run("unregister this instance in Redis", (client) => client.del(this.#key(this.self))).catch(() => undefined);
  }

  async #beat(): Promise<void> {
    const entry = JSON.stringify({ v: STORE_FORMAT_VERSION, address: this.#address, at: Date.now() });
    await this.#redis.run("register this instance in Redis", (client) => client.set(this.#key(this.self), entry, "PX", this.#ttlMs));
  }

  #key(id: string): string {
    return `${this.#redis.prefix}instance:${id}`;
  }
}

/** The address an instance's entry holds, or undefined (none, or another version's format). */
function addressIn(text: string | null | undefined): string | undefined {
  if (text === null || text === undefined) return undefined;
  const entry = JSON.parse(text) as { v?: number; address?: unknown };
  return entry.v === STORE_FORMAT_VERSION && typeof entry.address === "string" ? entry.address : undefined;
}
