import type { SharedStateHealth } from "@codemux/core";
import type { Redis } from "ioredis";
import { RedisStateError, RedisUnavailableError } from "./errors";
import type { LuaScript } from "./lua";
import { redactUrl } from "./setting";
import { inRedisSpan, tracing, type RedisSpan } from "./tracing";

export interface RedisConnectionOptions {
  /** `redis://` or `rediss://` URL (auth and TLS as ioredis takes them). */
  url: string;
  /** Every key starts with this (`codemux:`). */
  prefix: string;
  /** A command not answered within this fails (Redis slow counts as Redis down); 2 s by default. */
  commandTimeoutMs?: number;
}

/** Reconnect waits grow to this and stay there: Redis coming back is noticed within it. */
const MAX_RECONNECT_DELAY_MS = 1000;

/**
 * One client of the deployment's Redis, shared by the stores of one instance. Commands fail at once
 * while Redis is down (no offline queue: a call that needs shared state fails with a sentence naming
 * Redis, and nothing piles up in memory), and the client reconnects by itself.
 */
export class RedisConnection implements SharedStateHealth {
  readonly kind = "redis";
  readonly where: string;
  readonly prefix: string;
  readonly client: Redis;

  /** Connects (in the background: use `ready` to wait); the client library is loaded only here, so an instance on files never loads it. */
  static async open(options: RedisConnectionOptions): Promise<RedisConnection> {
    const { Redis } = await import("ioredis");
    return new RedisConnection(options, Redis);
  }

  private constructor(options: RedisConnectionOptions, Client: typeof Redis) {
    this.where = redactUrl(options.url);
    this.prefix = options.prefix;
    this.client = new Client(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 2000,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(times * 100, MAX_RECONNECT_DELAY_MS),
      lazyConnect: false,
    });
    // Connection errors are seen by the commands that meet them and in `up()`; the client retries.
    this.client.on("error", () => undefined);
  }

  up(): boolean {
    return this.client.status === "ready";
  }

  /**
   * Calls `changed(false, reason)` once when Redis goes away after it was reached, and `changed(true)` once
   * when it is back: one line for the operator per change, not one per reconnect attempt.
   */
  onStateChange(changed: (up: boolean, reason?: string) => void): void {
    let up = this.up();
    let reason: string | undefined;
    this.client.on("error", (error: NodeJS.ErrnoException) => {
      reason = error.code ?? error.message;
    });
    this.client.on("ready", () => {
      if (!up) changed((up = true));
    });
    this.client.on("close", () => {
      if (up) changed((up = false), reason);
    });
  }

  /** Waits (bounded) for the first connection; false when Redis is not there yet (the instance serves on and retries). */
  async ready(timeoutMs: number): Promise<boolean> {
    if (this.up()) return true;
    return await new Promise<boolean>((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.client.off("ready", onReady);
        resolve(value);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.on("ready", onReady);
    });
  }

  /**
   * Why Redis may lose a write it acknowledged (a job codemux told a client it accepted) when it is killed, or
   * undefined when it persists every write before it answers (`appendonly yes`, `appendfsync always`) or will not say
   * (CONFIG refused, as on some managed services). With `everysec`, Redis answers before the write reaches the disk
   * and can lose up to a second or two of them; codemux does not change the operator's Redis, it says so.
   */
  async durability(): Promise<string | undefined> {
    let settings: string[];
    try {
      settings = [...((await this.client.config("GET", "appendonly")) as string[]), ...((await this.client.config("GET", "appendfsync")) as string[])];
    } catch {
      return undefined;
    }
    const value = (name: string) => settings[settings.indexOf(name) + 1];
    if (value("appendonly") === "yes" && value("appendfsync") === "always") return undefined;
    const how = value("appendonly") === "yes" ? `appendfsync ${value("appendfsync")}` : "appendonly no";
    return `Redis at ${this.where} runs with ${how}: it answers before a write is on disk, so jobs, results and limits acknowledged in the last second or so before it is killed can be lost. Run it with appendonly yes and appendfsync always (docs/scale-out.md).`;
  }

  /**
   * Runs Redis commands; any failure to reach Redis becomes a RedisUnavailableError that says `what` failed. With
   * `span`, the round trip is a span of its own while tracing (those that add up: jobs queued, taken, saved; shared records).
   */
  async run<T>(what: string, work: (client: Redis) => Promise<T>, span?: RedisSpan): Promise<T> {
    if (span !== undefined && tracing()) return await inRedisSpan(span, () => this.#run(what, work));
    return await this.#run(what, work);
  }

  async #run<T>(what: string, work: (client: Redis) => Promise<T>): Promise<T> {
    try {
      return await work(this.client);
    } catch (error) {
      // Our own refusals (a format this codemux does not read) pass through unchanged.
      if (RedisStateError.isInstance(error)) throw error;
      // A command met a closed connection: say so, not the client library's wording ("Stream isn't writeable ...").
      throw new RedisUnavailableError(this.where, what, this.up() ? error : new Error("not connected", { cause: error }));
    }
  }

  /** Runs a Lua script by its hash, sending its text only when Redis does not know it yet (after a restart). */
  async script(what: string, source: LuaScript, { keys, args, span }: { keys: string[]; args: string[]; span?: RedisSpan }): Promise<unknown> {
    return await this.run(
      what,
      async (client) => {
        try {
          return await client.evalsha(source.sha, keys.length, ...keys, ...args);
        } catch (error) {
          if (!String((error as Error).message).startsWith("NOSCRIPT")) throw error;
          return await client.eval(source.text, keys.length, ...keys, ...args);
        }
      },
      span,
    );
  }

  /**
   * Hears `channel` on a connection of its own (a client in subscriber mode takes no other commands),
   * subscribed again at each reconnect, when `ready` runs too: messages sent while it was away are lost.
   */
  subscribe(channel: string, handlers: { message: (text: string) => void; ready?: () => void }): { close(): Promise<void> } {
    const subscriber = this.client.duplicate();
    subscriber.on("error", () => undefined);
    subscriber.on("message", (_channel, text) => handlers.message(text));
    subscriber.on("ready", () => {
      void subscriber
        .subscribe(channel)
        .then(() => handlers.ready?.())
        .catch(() => undefined);
    });
    return { close: async () => void (await subscriber.quit().catch(() => subscriber.disconnect())) };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
