import type { LoggingMessageNotification, Server } from "@modelcontextprotocol/server";

/**
 * The places the server changes an SDK object past its documented use, gathered here: a move of the
 * pinned SDK (`@modelcontextprotocol/server`) that breaks one fails `sdk-internals.test.ts`, and the
 * README's "SDK seams" names each. (The stdio lanes' wrapping of a transport's `onmessage` stays with
 * the lane, `stdio.ts` and `fast-lane.ts`: a transport's handlers are the SDK's public contract.)
 */
export const SDK_INTERNALS = {
  /** `Server#notification`, replaced on one instance: every log line the server sends goes where `route` says. */
  notification: "Server (Protocol) method, replaced on the instance",
} as const;

/**
 * Sends the `notifications/message` of `server` (its own log lines and the ones codemux relays) to
 * `route` instead of its transport; every other notification goes out as before.
 */
export function routeLogMessages(server: Server, route: (params: LoggingMessageNotification["params"]) => Promise<void>): void {
  const send = server.notification.bind(server);
  server.notification = (notification, options) => {
    if (notification.method !== "notifications/message") return send(notification, options);
    return route(notification.params as LoggingMessageNotification["params"]);
  };
}
