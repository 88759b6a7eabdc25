import { CannotWrapError } from "./errors";

/**
 * Every place hooks reaches past an MCP SDK's public API, in this one file: a move of a pinned SDK
 * (`@modelcontextprotocol/sdk` 1.x, `@modelcontextprotocol/server` 2.x) that takes one away fails
 * `sdk-internals.test.ts`, and the README's "SDK seams" names each of these.
 */
export const SDK_INTERNALS = {
  /** The low-level `Server`'s private map of request handlers, wrapped so a `tools/call` handler set later goes through the plugins. */
  _requestHandlers: "Server (Protocol) instance field, a Map",
  /** The low-level `Server`'s name as it was constructed (no public getter). */
  _serverInfo: "Server instance field, { name, version }",
} as const;

/**
 * The one place that reads the SDK's private fields. SDK 1.x has no public way to get or replace a
 * handler already installed: its `setRequestHandler` fills the private map `_requestHandlers`, which
 * is wrapped here (and `Server` has no getter for its name, `_serverInfo`). Throws at wrap time,
 * rather than silently not wrapping, when an SDK keeps them elsewhere.
 */
export function sdkInternals<Handler>(low: object): { handlers: Map<string, Handler>; serverName: string | undefined } {
  const internals = low as unknown as { _requestHandlers?: unknown; _serverInfo?: { name?: unknown } };
  const handlers = internals._requestHandlers;
  if (!(handlers instanceof Map)) {
    throw new CannotWrapError(
      "wrapWithProxy: this version of the MCP SDK keeps its request handlers where codemux cannot wrap them (the private `_requestHandlers` map of SDK 1.x and v2); use @modelcontextprotocol/sdk 1.32.2 or @modelcontextprotocol/server 2.4.0, the versions @codemux/hooks is tested with.",
    );
  }
  const name = internals._serverInfo?.name;
  return { handlers: handlers as Map<string, Handler>, serverName: typeof name === "string" ? name : undefined };
}
