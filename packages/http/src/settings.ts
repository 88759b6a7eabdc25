import { closestNames } from "@codemux/core";
import { ConfigError } from "@codemux/pool";
import { trustedProxyList } from "./connections";
import { principalOfKey } from "./tokens";

/** What one principal may hold over HTTP and in the job queue; an unset field keeps the default share. */
export interface PrincipalSettings {
  sessions?: number;
  jobs?: number;
}

/**
 * The `http` section of a config file, as options: for `CodemuxHttpServer` (trusted proxies,
 * connections per address, sessions per principal) and for the job queue (jobs per principal).
 */
export interface HttpSettings {
  trustedProxies?: string[];
  maxConnectionsPerAddress?: number;
  maxSessionsPerPrincipal?: number;
  maxJobsPerPrincipal?: number;
  principalLimits?: Record<string, PrincipalSettings>;
}

type Fail = (where: string, message: string) => never;

/**
 * Reads and checks the `http` section of a parsed config file; a mistake is a `ConfigError` that
 * names the file and the field.
 *
 * @example
 * // { "http": { "trustedProxies": ["127.0.0.1"], "limits": { "perPrincipal": { "sessions": 10, "jobs": 5 }, "principals": { "ci": { "sessions": 40 } } } } }
 * const settings = parseHttpSettings(JSON.parse(text), "codemux.json");
 */
export function parseHttpSettings(config: unknown, file = "config"): HttpSettings {
  const read = new SettingsReader((where, message) => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${message}`, { file });
  });
  const section = isObject(config) ? config.http : undefined;
  if (section === undefined) return {};
  const http = read.object(section, "http", ["trustedProxies", "limits"]);
  const settings: HttpSettings = {};
  if (http.trustedProxies !== undefined) settings.trustedProxies = read.trustedProxies(http.trustedProxies, "http.trustedProxies");
  if (http.limits === undefined) return settings;
  const limits = read.object(http.limits, "http.limits", ["connectionsPerAddress", "perPrincipal", "principals"]);
  if (limits.connectionsPerAddress !== undefined)
    settings.maxConnectionsPerAddress = read.count(limits.connectionsPerAddress, "http.limits.connectionsPerAddress");
  if (limits.perPrincipal !== undefined) {
    const share = read.principal(limits.perPrincipal, "http.limits.perPrincipal");
    if (share.sessions !== undefined) settings.maxSessionsPerPrincipal = share.sessions;
    if (share.jobs !== undefined) settings.maxJobsPerPrincipal = share.jobs;
  }
  if (limits.principals !== undefined) {
    const principals = read.object(limits.principals, "http.limits.principals");
    settings.principalLimits = Object.fromEntries(
      // Keyed by principal, as sessions and jobs know it: a bare token name stands for token:<name>.
      Object.entries(principals).map(([name, value]) => [principalOfKey(name), read.principal(value, `http.limits.principals.${name}`)]),
    );
  }
  return settings;
}

/** Checks one value at a time; `fail` throws with the field's path. */
class SettingsReader {
  constructor(readonly fail: Fail) {}

  object(value: unknown, where: string, known?: string[]): Record<string, unknown> {
    if (!isObject(value)) return this.fail(where, "expected an object");
    for (const key of Object.keys(value)) {
      if (!known || known.includes(key)) continue;
      const close = closestNames(key, known, 1)[0];
      this.fail(`${where}.${key}`, `unknown setting${close ? ` (did you mean "${close}"?)` : ""}; ${where} takes ${known.join(", ")}`);
    }
    return value;
  }

  count(value: unknown, where: string): number {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
      this.fail(where, `expected a whole number of at least 1 (got ${JSON.stringify(value)?.slice(0, 40)})`);
    return value as number;
  }

  principal(value: unknown, where: string): PrincipalSettings {
    const record = this.object(value, where, ["sessions", "jobs"]);
    return {
      ...(record.sessions !== undefined ? { sessions: this.count(record.sessions, `${where}.sessions`) } : {}),
      ...(record.jobs !== undefined ? { jobs: this.count(record.jobs, `${where}.jobs`) } : {}),
    };
  }

  /** Addresses or CIDR ranges, checked now so a typo stops the start instead of trusting nobody. */
  trustedProxies(value: unknown, where: string): string[] {
    if (!Array.isArray(value) || !value.every((entry) => typeof entry === "string"))
      this.fail(where, 'expected a list of addresses or CIDR ranges, e.g. ["127.0.0.1", "10.0.0.0/8"]');
    const entries = value as string[];
    try {
      trustedProxyList(entries);
    } catch (error) {
      this.fail(where, (error as Error).message);
    }
    return entries;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
