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
  const capabilities = client.getServerCapabilities();
  const base = listenFilter(capabilities);
  const subscribable = capabilities?.resources?.subscribe === true;
  const { server, logger, backoff } = options;
  const uris = new Set<string>();
  /** Each (re)opening is a generation: only the newest one's stream is kept, reopened or replaced. */
  let generation = 0;
  let current: McpSubscription | undefined;
  let failures = 0;
  /** Changes made to the URIs, and how many of them the newest stream's filter holds. */
  let changes = 0;
  let covered = 0;
  let reopened: Promise<void> = Promise.resolve();
  const filter = (): ListenFilter => (uris.size ? { ...base, resourceSubscriptions: [...uris] } : base);

  /** Resolves once the stream is acknowledged (or failed); it is then watched until it ends. */
  const open = async (mine: number): Promise<void> => {
    if (mine !== generation || !options.alive()) return;
    let subscription: McpSubscription;
    try {
      subscription = await client.listen(filter(), { timeout: options.timeoutMs });
    } catch (error) {
      // A server that refuses the request (no such method, a bad filter) refuses it again: its tools are re-listed on the interval instead.
      if (error instanceof ProtocolError) {
        logger.warn(`[${server}] refused to open a listen stream (${error.message}); its changes are seen when its tools are re-listed`);
        return;
      }
      return retry(mine, error instanceof Error ? error.message : String(error));
    }
    if (mine !== generation) return void subscription.close().catch(() => undefined);
    const previous = current;
    current = subscription;
    void previous?.close().catch(() => undefined);
    void watch(subscription, mine);
  };

  const watch = async (subscription: McpSubscription, mine: number): Promise<void> => {
    const since = Date.now();
    const how = await subscription.closed;
    if (how === "local" || mine !== generation) return;
    // A stream that stayed up a while starts its backoff over, as a connection does.
    if (Date.now() - since > STABLE_AFTER_MS) failures = 0;
    retry(mine, how === "graceful" ? "the server ended the listen stream" : "the listen stream dropped");
  };

  const retry = (mine: number, reason: string): void => {
    if (mine !== generation || !options.alive()) return;
    failures += 1;
    const maxAttempts = backoff?.maxAttempts ?? DEFAULT_BACKOFF.maxAttempts;
    if (failures > maxAttempts) {
      logger.warn(
        `[${server}] gave up reopening its listen stream after ${maxAttempts} attempts (${reason}); its changes are seen when its tools are re-listed`,
      );
      return;
    }
    const delay = backoffDelay(failures, backoff);
    logger.info(`[${server}] ${reason}: reopening it in ${delay} ms`);
    setTimeout(() => void open(mine), delay).unref();
  };

  /** Replaces the stream by one whose filter holds the URIs now (none at all when nothing is left to listen for). */
  const refilter = async (): Promise<void> => {
    changes += 1;
    // Serialised: changes made while a stream is being opened are taken by one more opening, not one each.
    reopened = reopened.then(() => {
      if (covered === changes) return;
      covered = changes;
      generation += 1;
      if (Object.keys(filter()).length) return open(generation);
      const previous = current;
      current = undefined;
      void previous?.close().catch(() => undefined);
    });
    await reopened;
  };

  client.subscribeToResource = async (uri) => {
    if (!subscribable) throw new PoolError("DOWNSTREAM_ERROR", `server "${server}" offers no resource subscriptions (it declares no resources.subscribe)`);
    if (uris.has(uri)) return;
    // Each URI is in every stream's filter until it is unsubscribed: the set is bounded.
    if (uris.size >= MAX_LISTEN_RESOURCES)
      throw new PoolError(
        "SUBSCRIPTION_LIMIT",
        `server "${server}" already has ${MAX_LISTEN_RESOURCES} resources subscribed; unsubscribe from some of them first`,
      );
    uris.add(uri);
    await refilter();
  };
  client.unsubscribeFromResource = async (uri) => {
    if (uris.delete(uri)) await refilter();
  };
  if (Object.keys(base).length) void open(generation);
}
