import { ConfigError, SettingsReader, isSettingsObject } from "@codemux/pool";

/** A day: a job that waits on tools longer than this is better split. */
const MAX_RUN_MS = 24 * 3_600_000;

/**
 * The config's top-level `jobs` block, checked: `{ "jobs": { "maxRunMs": 1800000 } }`, how long a
 * background snippet may wait on tools (its own computing keeps execute_code's timeout).
 */
export function jobsSettingsOf(config: unknown, file: string | undefined): { maxRunMs?: number } {
  const value = isSettingsObject(config) ? config.jobs : undefined;
  if (value === undefined || file === undefined) return {};
  const read = new SettingsReader((where, what) => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${what}.`, { file });
  });
  const block = read.object(value, "jobs", ["maxRunMs"]);
  if (block.maxRunMs === undefined) return {};
  const ms = block.maxRunMs;
  if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1_000 || ms > MAX_RUN_MS)
    read.fail("jobs.maxRunMs", `expected a whole number of milliseconds from 1000 to ${MAX_RUN_MS} (a day)`);
  return { maxRunMs: ms as number };
}
