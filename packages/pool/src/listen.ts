import { ProtocolError, type Client, type McpSubscription, type ServerCapabilities } from "@modelcontextprotocol/client";
import type { Logger } from "@codemux/core";
import { backoffDelay, type BackoffOptions } from "./backoff";
import { DEFAULT_BACKOFF, STABLE_AFTER_MS } from "./defaults";

type ListenFilter = Parameters<Client["listen"]>[0];

export interface ListenOptions {
  server: string;
  logger: Logger;
  backoff?: BackoffOptions | undefined;
  /** How long the server has to acknowledge the stream. */
  timeoutMs: number;
  /** Whether the connection the stream belongs to still lives: once it does not, a dropped stream is not reopened. */
  alive: () => boolean;
}

/** The change notifications a 2026 server declares it sends: what codemux listens for (resource updates are not asked for: no URI is subscribed downstream). */
export function listenFilter(capabilities: ServerCapabilities | undefined): ListenFilter | undefined {
  const filter: ListenFilter = {};
  if (capabilities?.tools?.listChanged) filter.toolsListChanged = true;
  if (capabilities?.resources?.listChanged) filter.resourcesListChanged = true;
  if (capabilities?.prompts?.listChanged) filter.promptsListChanged = true;
  return Object.keys(filter).length ? filter : undefined;
}

/**
 * Opens one `subscriptions/listen` stream on a 2026-era connection whose server declares list changes; none when it
 * declares none or speaks 2025 (its notifications come unasked). What arrives goes to the client's notification handlers,
 * as a 2025 server's notifications do. A stream that drops is reopened with backoff while the connection lives; closing the
 * client (every way a connection ends) ends the stream.
 */
export function openListen(client: Client, options: ListenOptions): void {
  if (client.getProtocolEra() !== "modern") return;
  const filter = listenFilter(client.getServerCapabilities());
  if (!filter) return;
  const { server, logger, backoff } = options;
  let failures = 0;
  const open = async (): Promise<void> => {
    if (!options.alive()) return;
    let subscription: McpSubscription;
    try {
      subscription = await client.listen(filter, { timeout: options.timeoutMs });
    } catch (error) {
      // A server that refuses the request (no such method, a bad filter) refuses it again: its tools are re-listed on the interval instead.
      if (error instanceof ProtocolError) {
        logger.warn(`[${server}] refused to open a listen stream (${error.message}); its changes are seen when its tools are re-listed`);
        return;
      }
      return retry(error instanceof Error ? error.message : String(error));
    }
    const since = Date.now();
    const how = await subscription.closed;
    if (how === "local") return;
    // A stream that stayed up a while starts its backoff over, as a connection does.
    if (Date.now() - since > STABLE_AFTER_MS) failures = 0;
    retry(how === "graceful" ? "the server ended the listen stream" : "the listen stream dropped");
  };
  const retry = (reason: string): void => {
    if (!options.alive()) return;
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
    setTimeout(() => void open(), delay).unref();
  };
  void open();
}
