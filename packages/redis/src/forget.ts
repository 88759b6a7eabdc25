import { isPrincipalId } from "@codemux/core";
import { randomBytes } from "node:crypto";
import type { RedisConnection } from "./connection";
import type { InstanceRegistry } from "./instances";

/** What asking the other instances to forget a principal came to. */
export interface ForgetAsk {
  /** The instances that forgot it, each with what it deleted by kind. */
  answered: Array<{ id: string; address: string; forgotten: Record<string, number> }>;
  /** The instances registered when the ask went out that did not forget it: silent within the wait, or failed (`error`). */
  missed: Array<{ id: string; address: string; error?: string }>;
}

/** How long an instance's answer waits in Redis for the asker to read it. */
const ANSWER_TTL_MS = 60_000;
/** How long an ask waits for every instance by default: an instance cancels the principal's jobs first (10 s at most). */
const DEFAULT_WAIT_MS = 30_000;
const POLL_MS = 100;
/** An answer longer than this is not one of ours. */
const MAX_ANSWER_CHARS = 16 * 1024;
const ASK_ID = /^[0-9a-f]{24}$/;

/**
 * `codemux forget` across a deployment: an ask on a pub/sub channel (`<prefix>forget:asks`) that every
 * running instance hears and answers, after forgetting the principal there (what it holds in memory and
 * in its own folder), by pushing what it deleted to the ask's answer list (`<prefix>forget:answers:<id>`,
 * expiring). The asker waits for every instance registered when it asked, and names the ones that did
 * not answer, so that a forget never ends "done" while an instance still holds what it was to delete.
 */
export class RedisForgetRequests {
  readonly #redis: RedisConnection;
  readonly #registry: InstanceRegistry;
  readonly #channel: string;
  #subscriber: { close(): Promise<void> } | undefined;
  /** This instance hears asks (its own among them). */
  #listening = false;

  constructor(redis: RedisConnection, registry: InstanceRegistry) {
    this.#redis = redis;
    this.#registry = registry;
    this.#channel = `${redis.prefix}forget:asks`;
  }

  /** Answers every other instance's ask (and `codemux forget`'s) with what `forget` deleted here. */
  answer(forget: (principal: string) => Promise<Record<string, number>>): void {
    this.#subscriber = this.#redis.subscribe(this.#channel, {
      message: (text) => void this.#answer(text, forget),
      ready: () => {
        this.#listening = true;
      },
    });
  }

  /** Asks every other registered instance to forget `principal`, and waits (bounded) for each to answer. */
  async ask(principal: string, options: { waitMs?: number } = {}): Promise<ForgetAsk> {
    const others = (await this.#registry.list()).filter((instance) => instance.id !== this.#registry.self);
    if (others.length === 0) return { answered: [], missed: [] };
    const id = randomBytes(12).toString("hex");
    const key = this.#answersKey(id);
    const heard = await this.#redis.run("ask the other codemux instances to forget in Redis", (client) =>
      client.publish(this.#channel, JSON.stringify({ id, principal, from: this.#registry.self })),
    );
    // Redis says how many listeners heard the ask (this instance's own among them when it answers asks): once they all
    // have answered, an instance still silent never heard it (registered, but not listening), and waiting longer is no use.
    const listeners = heard - (this.#listening ? 1 : 0);
    const answers = new Map<string, { forgotten?: Record<string, number>; error?: string }>();
    const deadline = Date.now() + (options.waitMs ?? DEFAULT_WAIT_MS);
    for (;;) {
      const lines = await this.#redis.run("read the answers to forget in Redis", (client) => client.lrange(key, 0, -1));
      for (const line of lines) {
        const answer = answerOf(line);
        if (answer) answers.set(answer.instance, answer);
      }
      if (others.every((instance) => answers.has(instance.id)) || answers.size >= listeners || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    await this.#redis.run("delete the answers to forget in Redis", (client) => client.del(key)).catch(() => undefined);
    const answered: ForgetAsk["answered"] = [];
    const missed: ForgetAsk["missed"] = [];
    for (const { id: instance, address } of others) {
      const answer = answers.get(instance);
      if (answer?.forgotten) answered.push({ id: instance, address, forgotten: answer.forgotten });
      else missed.push({ id: instance, address, ...(answer?.error ? { error: answer.error } : {}) });
    }
    return { answered, missed };
  }

  async close(): Promise<void> {
    await this.#subscriber?.close();
  }

  async #answer(text: string, forget: (principal: string) => Promise<Record<string, number>>): Promise<void> {
    let ask: { id?: unknown; principal?: unknown; from?: unknown };
    try {
      ask = JSON.parse(text) as typeof ask;
    } catch {
      return;
    }
    const { id, principal, from } = ask;
    if (typeof id !== "string" || !ASK_ID.test(id) || typeof principal !== "string" || !isPrincipalId(principal) || from === this.#registry.self) return;
    let answer: { forgotten: Record<string, number> } | { error: string };
    try {
      answer = { forgotten: await forget(principal) };
    } catch (error) {
      answer = { error: (error as Error).message.slice(0, 500) };
    }
    const key = this.#answersKey(id);
    const line = JSON.stringify({ instance: this.#registry.self, ...answer });
    await this.#redis
      .run("answer an ask to forget in Redis", (client) => client.multi().rpush(key, line).pexpire(key, ANSWER_TTL_MS).exec())
      .catch(() => undefined);
  }

  #answersKey(id: string): string {
    return `${this.#redis.prefix}forget:answers:${id}`;
  }
}

/** One instance's answer as pushed, or undefined for anything else. */
function answerOf(line: string): { instance: string; forgotten?: Record<string, number>; error?: string } | undefined {
  if (line.length > MAX_ANSWER_CHARS) return undefined;
  try {
    const { instance, forgotten, error } = JSON.parse(line) as { instance?: unknown; forgotten?: unknown; error?: unknown };
    if (typeof instance !== "string") return undefined;
    if (typeof error === "string") return { instance, error };
    if (typeof forgotten !== "object" || forgotten === null) return undefined;
    const counts = Object.entries(forgotten).filter((entry): entry is [string, number] => Number.isSafeInteger(entry[1]));
    return { instance, forgotten: Object.fromEntries(counts) };
  } catch {
    return undefined;
  }
}
