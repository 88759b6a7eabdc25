import { ConfigError, SettingsReader, isSettingsObject } from "@codemux/pool";
import { trustedProxyList } from "./connections";

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

/**
 * Reads and checks the `http` section of a parsed config file; a mistake is a `ConfigError` that
 * names the file and the field.
 *
 * @example
 * // { "http": { "trustedProxies": ["127.0.0.1"], "limits": { "perPrincipal": { "sessions": 10, "jobs": 5 }, "principals": { "ci": { "sessions": 40 } } } } }
 * const settings = parseHttpSettings(JSON.parse(text), "codemux.json");
 */
export function parseHttpSettings(config: unknown, file = "config"): HttpSettings {
  const read = new HttpSettingsReader((where, message) => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${message}`, { file });
  });
  const section = isSettingsObject(config) ? config.http : undefined;
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
      Object.entries(principals).map(([name, value]) => [name, read.principal(value, `http.limits.principals.${name}`)]),
    );
  }
  return settings;
}

/** The pool's reader, with the http section's own values. */
class HttpSettingsReader extends SettingsReader {
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
