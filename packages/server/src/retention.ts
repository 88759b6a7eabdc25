import { ConfigError } from "@codemux/pool";

/** How long the gateway keeps one kind of data a principal's calls made. */
export interface RetentionTimes {
  /** Kept (large) results: readable this long after they were kept. */
  resultsMs?: number;
  /** Ended background jobs, their transcripts and results. */
  jobsMs?: number;
  /** Lines of the audit log. */
  auditMs?: number;
}

/** The config's `retention`: times for everyone, and times for named principals over them. */
export interface Retention extends RetentionTimes {
  principals?: Record<string, RetentionTimes>;
}

const KINDS = ["resultsMs", "jobsMs", "auditMs"] as const;
/** Ten years: long enough to mean "keep", short enough that `Date.now() + ms` stays a safe number. */
const MAX_MS = 10 * 365 * 24 * 3_600_000;
const MAX_PRINCIPALS = 1_000;
const RULE = `a whole number of milliseconds from 1 to ${MAX_MS} (ten years)`;

/**
 * The config's top-level `retention` block, checked, or undefined when it has none:
 * `{ "resultsMs": 1800000, "jobsMs": 604800000, "auditMs": 2592000000, "principals": { "token:ci": { "jobsMs": 86400000 } } }`.
 */
export function retentionOf(config: unknown, file: string): Retention | undefined {
  const value = typeof config === "object" && config !== null && !Array.isArray(config) ? (config as Record<string, unknown>).retention : undefined;
  if (value === undefined) return undefined;
  const fail = (where: string, what: string): never => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${what}.`, { file });
  };
  const times = (raw: unknown, where: string): RetentionTimes => {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return fail(where, "expected an object");
    const out: RetentionTimes = {};
    for (const [key, ms] of Object.entries(raw)) {
      if (key === "principals" && where === "retention") continue;
      if (!(KINDS as readonly string[]).includes(key))
        fail(`${where}.${key}`, `unknown key; use ${KINDS.join(", ")}${where === "retention" ? " or principals" : ""}`);
      if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1 || ms > MAX_MS) fail(`${where}.${key}`, `expected ${RULE}`);
      out[key as (typeof KINDS)[number]] = ms as number;
    }
    return out;
  };
  const retention: Retention = times(value, "retention");
  const principals = (value as Record<string, unknown>).principals;
  if (principals !== undefined) {
    if (typeof principals !== "object" || principals === null || Array.isArray(principals))
      fail("retention.principals", 'expected an object of principal ids, e.g. { "token:ci": { "jobsMs": 86400000 } }');
    const entries = Object.entries(principals as Record<string, unknown>);
    if (entries.length > MAX_PRINCIPALS) fail("retention.principals", `at most ${MAX_PRINCIPALS} principals`);
    retention.principals = Object.fromEntries(entries.map(([id, raw]) => [id, times(raw, `retention.principals.${JSON.stringify(id)}`)]));
  }
  return retention;
}

/** The time `principal`'s data of this kind is kept: its own, else everyone's; undefined when the config sets neither. */
export function retentionFor(retention: Retention | undefined, kind: keyof RetentionTimes, principal: string): number | undefined {
  const own = retention?.principals && Object.hasOwn(retention.principals, principal) ? retention.principals[principal] : undefined;
  return own?.[kind] ?? retention?.[kind];
}
