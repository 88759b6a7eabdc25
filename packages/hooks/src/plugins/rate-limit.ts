import { TokenBuckets, globMatcher, type RateBuckets } from "@codemux/core";
import { RateLimitedError } from "../errors";
import type { Plugin, PluginCall } from "../types";

export type RateLimitDimension = "principal" | "server" | "tool";

/** One token bucket per distinct value of `by` (e.g. per principal and tool): `calls` per `perMs`, up to `burst` at once. */
export interface RateLimitRule {
  by: RateLimitDimension[];
  calls: number;
  perMs: number;
  /** Bucket size (calls allowed at once after a quiet spell); `calls` by default. */
  burst?: number;
  /** Only calls of these `server__tool` globs count; all calls by default. */
  tools?: string[];
}

export interface RateLimitOptions {
  /** Default: 120 calls a minute per principal. */
  limits?: RateLimitRule[];
}

/**
 * `rate-limit`: token buckets per principal, server and tool (any combination, several rules).
 * A refused call is not counted and says when to retry (`RateLimitedError.retryAfterMs`; 429 over REST).
 */
export function rateLimitPlugin(options: RateLimitOptions = {}): Plugin {
  const rules = (options.limits ?? [{ by: ["principal"], calls: 120, perMs: 60_000 }]).map((rule) => ({
    ...rule,
    capacity: rule.burst ?? rule.calls,
    matches: rule.tools?.length ? globMatcher(rule.tools) : () => true,
  }));
  let buckets: RateBuckets = new TokenBuckets();
  let clock: () => number = Date.now;

  const keyOf = (index: number, by: RateLimitDimension[], call: PluginCall) =>
    `${index}\u0000${by.map((d) => (d === "principal" ? call.principal : d === "server" ? call.server : call.name)).join("\u0000")}`;

  return {
    name: "rate-limit",
    priority: 900,
    failClosed: true,
    init(ctx) {
      clock = ctx.clock;
      if (ctx.rateBuckets) buckets = ctx.rateBuckets;
    },
    async beforeCall(call) {
      const checks = rules.flatMap((rule, index) => (rule.matches(call.name) ? [{ rule, key: keyOf(index, rule.by, call) }] : []));
      const verdict = await buckets.takeAll(
        checks.map(({ rule, key }) => ({ key, rate: rule })),
        clock(),
      );
      const refused = verdict.refused === undefined ? undefined : checks[verdict.refused];
      if (refused) {
        const { rule } = refused;
        const { waitMs } = verdict;
        const who = rule.by
          .map((d) => (d === "principal" ? `principal "${call.principal}"` : d === "server" ? `server ${call.server}` : `tool ${call.name}`))
          .join(", ");
        call.logField("rateLimited", true);
        return {
          action: "abort",
          error: new RateLimitedError(
            `Rate limited: at most ${rule.calls} calls per ${formatMs(rule.perMs)} for ${who || "everyone"}. ${call.name} was not called; retry in ${formatMs(waitMs)}.`,
            waitMs,
            { rule: { by: rule.by, calls: rule.calls, perMs: rule.perMs } },
          ),
        };
      }
    },
  };
}

function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.ceil(ms / 1000)} s`;
  if (ms < 2 * 3_600_000) return `${Math.ceil(ms / 60_000)} min`;
  return `${Math.ceil(ms / 3_600_000)} h`;
}
