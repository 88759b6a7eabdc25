import type { Logger } from "@codemux/core";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { MAX_SUBSCRIPTIONS_PER_SESSION } from "./defaults";

/** A downstream resource: its server and the URI that server knows. */
export interface DownstreamResource {
  server: string;
  uri: string;
  /** An isolated server's resource is its owner's instance's: subscribed there, counted per instance (`key`); `perSession` instances end with their session. */
  instance?: { session: { id: string; principal: string }; key: string; perSession: boolean };
}

/** What subscribing needs of a downstream server's connection (the shared one, as every session's subscription goes there). */
export interface SubscribingClient {
  subscribeResource(params: { uri: string }): Promise<unknown>;
  unsubscribeResource(params: { uri: string }): Promise<unknown>;
}

export interface ResourceSubscriptionsOptions {
  /** The connection that holds `resource`'s subscription: its instance's, for an isolated server. */
  client: (resource: DownstreamResource) => Promise<SubscribingClient | undefined>;
  logger: Logger;
}

/**
 * The resource subscriptions of codemux's client sessions, counted per downstream resource: a subscription is passed
 * down each time (a reconnected server forgot it), and the unsubscribe only when the last session holding the resource
 * lets go of it (by `resources/unsubscribe` or by ending). Calls to one resource are made in order, one at a time.
 */
export class ResourceSubscriptions {
  /** `server\0uri` -> the sessions holding it */
  readonly #holders = new Map<string, Set<string>>();
  /** session id -> URI as shown -> the downstream resource */
  readonly #bySession = new Map<string, Map<string, DownstreamResource>>();
  /** `server\0uri` -> the tail of its downstream calls */
  readonly #queues = new Map<string, Promise<void>>();
  readonly #options: ResourceSubscriptionsOptions;

  constructor(options: ResourceSubscriptionsOptions) {
    this.#options = options;
  }

  /** Whether `session` subscribed to the resource shown as `shown`. */
  has(session: string, shown: string): boolean {
    return this.#bySession.get(session)?.has(shown) ?? false;
  }

  /** The URI as `session` was shown it of the resource it holds that is `server`'s `uri`, if it holds one. */
  shownFor(session: string, server: string, uri: string): string | undefined {
    for (const [shown, resource] of this.#bySession.get(session) ?? []) if (resource.server === server && resource.uri === uri) return shown;
    return undefined;
  }

  /** Subscribes `session` to `shown` (the server's `resource`); a downstream refusal is thrown and nothing is kept. */
  async subscribe(session: string, shown: string, resource: DownstreamResource): Promise<void> {
    const held = this.#bySession.get(session);
    // Any URI a template matches can be subscribed to: what one session holds is bounded.
    if (held && held.size >= MAX_SUBSCRIPTIONS_PER_SESSION && !held.has(shown))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `This session already holds ${MAX_SUBSCRIPTIONS_PER_SESSION} resource subscriptions, the most it may; unsubscribe from some first.`,
      );
    // Held before the call goes down: a last holder leaving meanwhile does not unsubscribe it under this one.
    const had = held?.has(shown) === true;
    this.#hold(session, shown, resource);
    try {
      await this.#queue(keyOf(resource), async () => (await this.#options.client(resource))?.subscribeResource({ uri: resource.uri }));
    } catch (error) {
      // A repeated subscribe that failed leaves the earlier one that worked in place.
      if (!had) this.#release(session, shown);
      throw error;
    }
  }

  /** Lets go of `session`'s subscription to `shown`; the last holder's unsubscribe goes down (a failure there is logged: the client is unsubscribed either way). */
  async unsubscribe(session: string, shown: string, ending = false): Promise<void> {
    const resource = this.#release(session, shown);
    // An instance that ends with its session forgets it anyway: asking for it here would start it again.
    if (!resource || (ending && resource.instance?.perSession)) return;
    await this.#queue(keyOf(resource), async () => (await this.#options.client(resource))?.unsubscribeResource({ uri: resource.uri })).catch((error: unknown) =>
      this.#options.logger.warn(`[${resource.server}] could not unsubscribe from ${resource.uri.slice(0, 200)}: ${(error as Error).message}`),
    );
  }

  /** Lets go of everything `session` held (it ended). */
  async release(session: string): Promise<void> {
    const held = [...(this.#bySession.get(session)?.keys() ?? [])];
    await Promise.all(held.map((shown) => this.unsubscribe(session, shown, true)));
  }

  /** Forgets `session`'s hold of `shown`; the resource when no session holds it any more (its unsubscribe is due). */
  #release(session: string, shown: string): DownstreamResource | undefined {
    const held = this.#bySession.get(session);
    const resource = held?.get(shown);
    if (!held || !resource) return undefined;
    held.delete(shown);
    if (held.size === 0) this.#bySession.delete(session);
    const key = keyOf(resource);
    const holders = this.#holders.get(key);
    // Another of this session's shown URIs may name the same resource: it still holds it then.
    if (![...held.values()].some((r) => keyOf(r) === key)) holders?.delete(session);
    if (holders && holders.size > 0) return undefined;
    this.#holders.delete(key);
    return resource;
  }

  #hold(session: string, shown: string, resource: DownstreamResource): void {
    let held = this.#bySession.get(session);
    if (!held) this.#bySession.set(session, (held = new Map()));
    held.set(shown, resource);
    const key = keyOf(resource);
    let holders = this.#holders.get(key);
    if (!holders) this.#holders.set(key, (holders = new Set()));
    holders.add(session);
  }

  #queue(key: string, call: () => Promise<unknown>): Promise<void> {
    const run = (this.#queues.get(key) ?? Promise.resolve()).then(async () => void (await call()));
    const tail = run.catch(() => undefined);
    this.#queues.set(key, tail);
    void tail.then(() => {
      if (this.#queues.get(key) === tail) this.#queues.delete(key);
    });
    return run;
  }
}

function keyOf(resource: DownstreamResource): string {
  return `${resource.server}\u0000${resource.instance?.key ?? ""}\u0000${resource.uri}`;
}
