import { closestNames } from "@codemux/catalog";
import { ConfigError } from "@codemux/pool";
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
  const fail: Fail = (where, message) => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${message}`, { file });
  };
  const section = isObject(config) ? config.http : undefined;
  if (section === undefined) return {};
  const http = objectAt(section, "http", ["trustedProxies", "limits"], fail);
  const settings: HttpSettings = {};
  if (http.trustedProxies !== undefined) settings.trustedProxies = trustedProxiesAt(http.trustedProxies, fail);
  if (http.limits === undefined) return settings;
  const limits = objectAt(http.limits, "http.limits", ["connectionsPerAddress", "perPrincipal", "principals"], fail);
  if (limits.connectionsPerAddress !== undefined)
    settings.maxConnectionsPerAddress = countAt(limits.connectionsPerAddress, "http.limits.connectionsPerAddress", fail);
  if (limits.perPrincipal !== undefined) {
    const share = principalAt(limits.perPrincipal, "http.limits.perPrincipal", fail);
    if (share.sessions !== undefined) settings.maxSessionsPerPrincipal = share.sessions;
    if (share.jobs !== undefined) settings.maxJobsPerPrincipal = share.jobs;
  }
  if (limits.principals !== undefined) {
    const principals = objectAt(limits.principals, "http.limits.principals", undefined, fail);
    settings.principalLimits = Object.fromEntries(
      Object.entries(principals).map(([name, value]) => [name, principalAt(value, `http.limits.principals.${name}`, fail)]),
    );
  }
  return settings;
}

/** Addresses or CIDR ranges, checked now so a typo stops the start instead of trusting nobody. */
function trustedProxiesAt(value: unknown, fail: Fail): string[] {
  const where = "http.trustedProxies";
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === "string"))
    fail(where, 'expected a list of addresses or CIDR ranges, e.g. ["127.0.0.1", "10.0.0.0/8"]');
  const entries = value as string[];
  try {
    trustedProxyList(entries);
  } catch (error) {
    fail(where, (error as Error).message);
  }
  return entries;
}

function principalAt(value: unknown, where: string, fail: Fail): PrincipalSettings {
  const record = objectAt(value, where, ["sessions", "jobs"], fail);
  return {
    ...(record.sessions !== undefined ? { sessions: countAt(record.sessions, `${where}.sessions`, fail) } : {}),
    ...(record.jobs !== undefined ? { jobs: countAt(record.jobs, `${where}.jobs`, fail) } : {}),
  };
}

function objectAt(value: unknown, where: string, known: string[] | undefined, fail: Fail): Record<string, unknown> {
  if (!isObject(value)) return fail(where, "expected an object");
  for (const key of known ? Object.keys(value) : []) {
    if (known?.includes(key)) continue;
    const close = closestNames(key, known ?? [], 1)[0];
    fail(`${where}.${key}`, `unknown setting${close ? ` (did you mean "${close}"?)` : ""}; ${where} takes ${known?.join(", ")}`);
  }
  return value;
}

function countAt(value: unknown, where: string, fail: Fail): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
    fail(where, `expected a whole number of at least 1 (got ${JSON.stringify(value)?.slice(0, 40)})`);
  return value as number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
