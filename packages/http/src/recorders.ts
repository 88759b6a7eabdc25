import { NO_MASK, type SecretMask, type ToolCallMiddleware } from "@codemux/core";
import { Metrics, callMetricsMiddleware } from "./metrics";
import { ActivityLog } from "./ui/activity";

/** What the HTTP front end records of every downstream call: /metrics' call counts and latencies, and the admin page's Activity. */
export interface HttpCallRecorders {
  readonly metrics: Metrics;
  readonly activity: ActivityLog;
  /** Goes into the core's pipeline when it is composed (`CodemuxOptions.middleware`, after the plugins' and the jobs'). */
  readonly middleware: ToolCallMiddleware[];
}

/**
 * Makes the HTTP front end's call recorders before the core, so that their middleware is part of the core's
 * pipeline from its composition; the `CodemuxHttpServer` is then given the same recorders.
 *
 * @example
 * const recorders = httpCallRecorders({ mask });
 * const core = new Codemux({ config, mask, middleware: [...recorders.middleware] });
 * const http = new CodemuxHttpServer(core, { port: 3920, recorders });
 */
export function httpCallRecorders(options: { mask?: SecretMask; now?: () => number } = {}): HttpCallRecorders {
  const metrics = new Metrics();
  // Masked by the redact plugin's patterns (the core's mask): the page records calls before the plugins mask their results.
  const activity = new ActivityLog(options.now ?? Date.now, options.mask ?? NO_MASK);
  return { metrics, activity, middleware: [callMetricsMiddleware(metrics), activity.middleware()] };
}
