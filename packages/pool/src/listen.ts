import { ProtocolError, type McpSubscription, type ServerCapabilities } from "@modelcontextprotocol/client";
import type { Logger } from "@codemux/core";
import { backoffDelay, type BackoffOptions } from "./backoff";
import { DEFAULT_BACKOFF, MAX_LISTEN_RESOURCES, STABLE_AFTER_MS } from "./defaults";
import { PoolError } from "./errors";
import type { ChannelClient } from "./sdk-channel";

type ListenFilter = Parameters<ChannelClient["listen"]>[0];

export interface ListenOptions {
  server: string;
  logger: Logger;
  backoff?: BackoffOptions | undefined;
  /** How long the server has to acknowledge the stream. */
  timeoutMs: number;
  /** Whether the connection the stream belongs to still lives: once it does not, a dropped stream is not reopened. */
  alive: () => boolean;
}

/** The list changes a 2026 server declares it sends: what codemux listens for from the start. */
export function listenFilter(capabilities: ServerCapabilities | undefined): ListenFilter {
  const filter: ListenFilter = {};
  if (capabilities?.tools?.listChanged) filter.toolsListChanged = true;
  if (capabilities?.resources?.listChanged) filter.resourcesListChanged = true;
  if (capabilities?.prompts?.listChanged) filter.promptsListChanged = true;
  return filter;
}

/**
 * Opens one `subscriptions/listen` stream on a 2026-era connection whose server declares list changes (none on a 2025 one:
 * its notifications come unasked). What arrives goes to the client's notification handlers, as a 2025 server's
 * notifications do. A resource subscription (`subscribeResource`) joins the stream's filter and `unsubscribeResource` takes
 * it out: a new stream replaces the old one once acknowledged. A stream that drops is reopened with backoff while the connection lives; closing the client
 * (every way a connection ends) ends the stream.
 */
export function openListen(client: ChannelClient, options: ListenOptions): void {
  if (client.getProtocolEra() !== "modern") return;
  const stream = new ListenStream(client, options);
  client.subscribeToResource = (uri) => stream.subscribe(uri);
  client.unsubscribeFromResource = (uri) => stream.unsubscribe(uri);
  stream.start();
}

/** The listen stream of one connection: opened, watched, reopened with backoff, and replaced when its filter changes. */
class ListenStream {
  readonly #client: ChannelClient;
  readonly #options: ListenOptions;
  readonly #base: ListenFilter;
  readonly #subscribable: boolean;
  readonly #uris = new Set<string>();
  /** Each (re)opening is a generation: only the newest one's stream is kept, reopened or replaced. */
  #generation = 0;
  #current: McpSubscription | undefined;
  #failures = 0;
  /** Changes made to the URIs, and how many of them the newest stream's filter holds. */
  #changes = 0;
  #covered = 0;
  #reopened: Promise<void> = Promise.resolve();

  constructor(client: ChannelClient, options: ListenOptions) {
    this.#client = client;
    this.#options = options;
    const capabilities = client.getServerCapabilities();
    this.#base = listenFilter(capabilities);
    this.#subscribable = capabilities?.resources?.subscribe === true;
  }

  /** Opens the stream when the server declares list changes to listen for. */
  start(): void {
    if (Object.keys(this.#base).length) void this.#open(this.#generation);
  }

  async subscribe(uri: string): Promise<void> {
    const { server } = this.#options;
    if (!this.#subscribable)
      throw new PoolError("DOWNSTREAM_ERROR", `server "${server}" offers no resource subscriptions (it declares no resources.subscribe)`);
    if (this.#uris.has(uri)) return;
    // Each URI is in every stream's filter until it is unsubscribed: the set is bounded.
    if (this.#uris.size >= MAX_LISTEN_RESOURCES)
      throw new PoolError(
        "SUBSCRIPTION_LIMIT",
        `server "${server}" already has ${MAX_LISTEN_RESOURCES} resources subscribed; unsubscribe from some of them first`,
      );
    this.#uris.add(uri);
    await this.#refilter();
  }

  async unsubscribe(uri: string): Promise<void> {
    if (this.#uris.delete(uri)) await this.#refilter();
  }

  #filter(): ListenFilter {
    return this.#uris.size ? { ...this.#base, resourceSubscriptions: [...this.#uris] } : this.#base;
  }

  /** Resolves once the stream is acknowledged (or failed); it is then watched until it ends. */
  async #open(mine: number): Promise<void> {
    const { server, logger } = this.#options;
    if (mine !== this.#generation || !this.#options.alive()) return;
    let subscription: McpSubscription;
    try {
      subscription = await this.#client.listen(this.#filter(), { timeout: this.#options.timeoutMs });
    } catch (error) {
      // A server that refuses the request (no such method, a bad filter) refuses it again: its tools are re-listed on the interval instead.
      if (error instanceof ProtocolError) {
        logger.warn(`[${server}] refused to open a listen stream (${error.message}); its changes are seen when its tools are re-listed`);
        return;
      }
      return this.#retry(mine, error instanceof Error ? error.message : String(error));
    }
    if (mine !== this.#generation) return void subscription.close().catch(() => undefined);
    const previous = this.#current;
    this.#current = subscription;
    void previous?.close().catch(() => undefined);
    void this.#watch(subscription, mine);
  }

  async #watch(subscription: McpSubscription, mine: number): Promise<void> {
    const since = Date.now();
    const how = await subscription.closed;
    if (how === "local" || mine !== this.#generation) return;
    // A stream that stayed up a while starts its backoff over, as a connection does.
    if (Date.now() - since > STABLE_AFTER_MS) this.#failures = 0;
    this.#retry(mine, how === "graceful" ? "the server ended the listen stream" : "the listen stream dropped");
  }

  #retry(mine: number, reason: string): void {
    const { server, logger, backoff } = this.#options;
    if (mine !== this.#generation || !this.#options.alive()) return;
    this.#failures += 1;
    const maxAttempts = backoff?.maxAttempts ?? DEFAULT_BACKOFF.maxAttempts;
    if (this.#failures > maxAttempts) {
      logger.warn(
        `[${server}] gave up reopening its listen stream after ${maxAttempts} attempts (${reason}); its changes are seen when its tools are re-listed`,
      );
      return;
    }
    const delay = backoffDelay(this.#failures, backoff);
    logger.info(`[${server}] ${reason}: reopening it in ${delay} ms`);
    setTimeout(() => void this.#open(mine), delay).unref();
  }

  /** Replaces the stream by one whose filter holds the URIs now (none at all when nothing is left to listen for). */
  async #refilter(): Promise<void> {
    this.#changes += 1;
    // Serialised: changes made while a stream is being opened are taken by one more opening, not one each.
    this.#reopened = this.#reopened.then(() => {
      if (this.#covered === this.#changes) return;
      this.#covered = this.#changes;
      this.#generation += 1;
      if (Object.keys(this.#filter()).length) return this.#open(this.#generation);
      const previous = this.#current;
      this.#current = undefined;
      void previous?.close().catch(() => undefined);
    });
    await this.#reopened;
  }
}
