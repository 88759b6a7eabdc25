import { principalOfName } from "@codemux/core";
import { ConfigError, SettingsReader, isSettingsObject } from "@codemux/pool";
import { trustedProxyList } from "./connections";
import type { OAuthOptions } from "./auth/oauth";

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
  publicUrl?: string;
  oauth?: OAuthOptions;
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
  const http = read.object(section, "http", ["trustedProxies", "limits", "publicUrl", "oauth"]);
  const settings: HttpSettings = {};
  if (http.trustedProxies !== undefined) settings.trustedProxies = read.trustedProxies(http.trustedProxies, "http.trustedProxies");
  if (http.publicUrl !== undefined) {
    settings.publicUrl = read.url(http.publicUrl, "http.publicUrl");
    if (new URL(settings.publicUrl).pathname !== "/")
      read.fail("http.publicUrl", "must be an origin without a path (codemux serves its routes at the root), e.g. https://codemux.example.com");
  }
  if (http.oauth !== undefined) {
    if (settings.publicUrl === undefined) read.fail("http.oauth", "needs http.publicUrl: the URL clients reach codemux at, which access tokens are issued for");
    settings.oauth = read.oauth(http.oauth, "http.oauth");
  }
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
      Object.entries(principals).map(([name, value]) => [principalOfName(name), read.principal(value, `http.limits.principals.${name}`)]),
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

  url(value: unknown, where: string): string {
    if (typeof value !== "string" || !/^https?:\/\/[^\s?#]+$/.test(value) || !URL.canParse(value))
      this.fail(where, `expected an http(s) URL without query or fragment, e.g. "https://codemux.example.com" (got ${JSON.stringify(value)?.slice(0, 80)})`);
    return value as string;
  }

  names(value: unknown, where: string): string[] {
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && /^[\x21-\x7e]{1,128}$/.test(v)))
      this.fail(where, 'expected a list of names without spaces, e.g. ["mcp", "admin"]');
    return value as string[];
  }

  oauth(value: unknown, where: string): OAuthOptions {
    const record = this.object(value, where, ["issuer", "jwksUri", "audience", "scopesSupported", "requiredScopes", "groupsClaim"]);
    if (record.issuer === undefined) this.fail(`${where}.issuer`, "is required: the authorization server's issuer URL, as its tokens' iss claim says");
    const oauth: OAuthOptions = { issuer: this.url(record.issuer, `${where}.issuer`) };
    if (record.jwksUri !== undefined) oauth.jwksUri = this.url(record.jwksUri, `${where}.jwksUri`);
    if (record.audience !== undefined)
      oauth.audience = typeof record.audience === "string" ? [record.audience] : this.names(record.audience, `${where}.audience`);
    if (record.scopesSupported !== undefined) oauth.scopesSupported = this.names(record.scopesSupported, `${where}.scopesSupported`);
    if (record.requiredScopes !== undefined) oauth.requiredScopes = this.names(record.requiredScopes, `${where}.requiredScopes`);
    if (record.groupsClaim !== undefined) {
      if (typeof record.groupsClaim !== "string" || !/^[\x21-\x7e]{1,128}$/.test(record.groupsClaim))
        this.fail(`${where}.groupsClaim`, 'expected a claim name, e.g. "groups"');
      oauth.groupsClaim = record.groupsClaim as string;
    }
    return oauth;
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
