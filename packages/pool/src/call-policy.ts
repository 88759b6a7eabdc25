import { APPS_EXTENSION, declaresApps, type ClientCapabilities } from "@codemux/core";
import { PoolError } from "./errors";

/** What a call carries down (the caller's relayable capabilities) and when a failed one is tried again. */

/** The caller's capabilities that codemux can relay (a 2026 server may ask for those only), and roots, which codemux answers itself: none without a relay. */
export function relayable(caller: ClientCapabilities | undefined, relayed: ClientCapabilities | undefined): ClientCapabilities | undefined {
  if (caller === undefined) return undefined;
  const kept: ClientCapabilities = Object.fromEntries(
    Object.entries(caller).filter(([key]) => key !== "roots" && key !== "extensions" && relayed?.[key] !== undefined),
  );
  // Of the extensions, MCP Apps is the caller's to declare: a server may offer its apps to a host that renders them only.
  if (declaresApps(caller)) kept.extensions = { [APPS_EXTENSION]: (caller.extensions as Record<string, unknown>)[APPS_EXTENSION] };
  // A shared server is told its config's roots, an isolated one its caller's or its config's: whatever the caller declared.
  if (relayed?.roots) kept.roots = {};
  return kept;
}

/** Safe to try again: a transient failure before the request reached the server, or any transient failure of a read-only or idempotent tool. */
export function retryable(error: unknown, safeAfterSend: boolean): boolean {
  if (!PoolError.isInstance(error) || error.data?.transient !== true) return false;
  return error.data.sent === false || safeAfterSend;
}
