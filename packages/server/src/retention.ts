import { ConfigError, SettingsReader, isSettingsObject } from "@codemux/pool";

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
  const value = isSettingsObject(config) ? config.retention : undefined;
  if (value === undefined) return undefined;
  const read = new SettingsReader((where, what) => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${what}.`, { file });
  });
  const times = (raw: Record<string, unknown>, where: string): RetentionTimes => {
    const out: RetentionTimes = {};
    for (const kind of KINDS) {
      const ms = raw[kind];
      if (ms === undefined) continue;
      if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1 || ms > MAX_MS) read.fail(`${where}.${kind}`, `expected ${RULE}`);
      out[kind] = ms as number;
    }
    return out;
  };
  const block = read.object(value, "retention", [...KINDS, "principals"]);
  const retention: Retention = times(block, "retention");
  if (block.principals !== undefined) {
    if (!isSettingsObject(block.principals))
      read.fail("retention.principals", 'expected an object of principal ids, e.g. { "token:ci": { "jobsMs": 86400000 } }');
    const entries = Object.entries(block.principals as Record<string, unknown>);
    if (entries.length > MAX_PRINCIPALS) read.fail("retention.principals", `at most ${MAX_PRINCIPALS} principals`);
    retention.principals = Object.fromEntries(
      entries.map(([id, raw]) => {
        const where = `retention.principals.${JSON.stringify(id)}`;
        return [id, times(read.object(raw, where, KINDS), where)];
      }),
    );
  }
  return retention;
}

/** The time `principal`'s data of this kind is kept: its own, else everyone's; undefined when the config sets neither. */
export function retentionFor(retention: Retention | undefined, kind: keyof RetentionTimes, principal: string): number | undefined {
  const own = retention?.principals && Object.hasOwn(retention.principals, principal) ? retention.principals[principal] : undefined;
  return own?.[kind] ?? retention?.[kind];
}
