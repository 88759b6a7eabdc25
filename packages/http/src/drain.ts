import type { ServerResponse } from "node:http";

/** How long a client whose stream a draining instance closed waits before it reconnects (through the balancer, to another instance). */
export const DRAIN_RETRY_MS = 2000;

/** Ends an open event stream with an SSE `retry:` field first, so the client reconnects after DRAIN_RETRY_MS rather than at once. */
export function endStreamWithRetry(res: ServerResponse): void {
  if (res.writableEnded || res.destroyed) return;
  hintRetry(res);
  res.end();
}

/** Writes the `retry:` field on an event stream that stays open a while longer (a call still answering, a listen stream about to end). */
export function hintRetry(res: ServerResponse): void {
  if (res.writableEnded || res.destroyed || !res.headersSent) return;
  if (String(res.getHeader("content-type")).startsWith("text/event-stream")) res.write(`retry: ${DRAIN_RETRY_MS}\n\n`);
}
