import type { HttpCallRecorders } from "./recorders";
import { LOG_LEVELS, principalOfName, type LogLevel } from "@codemux/core";
import { DEFAULT_HOST, DEFAULT_PORT, defaultAllowedHosts } from "./address";
import type { ScaleOut } from "./scale-out";
import type { OAuthOptions } from "./auth/oauth";
import type { LogRecord, LogSink } from "./log";
import type { TokenSpec } from "./tokens";
import type { UiSources } from "./ui/sources";

/** What a reload changed, as `Codemux.reload` reports it. */
export interface ReloadSummary {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface HttpServeOptions {
  /**
   * The call recorders (`httpCallRecorders`) whose middleware the core was composed with. Without them the server
   * makes its own but leaves the core as it was composed: /metrics has no call counts and the admin page no Activity.
   */
  recorders?: HttpCallRecorders;
  /** Address to bind; 127.0.0.1 by default. A non-loopback address needs a token (or `insecureNoAuth`). */
  host?: string;
  /** Port; 3920 by default, 0 for any free port. */
  port?: number;
  /** Accepted tokens; their names are the principals. No tokens: no auth (loopback only, unless `insecureNoAuth`). */
  tokens?: TokenSpec[];
  /**
   * A token file (lines of `name:token`, or JSON entries with `groups`, `scopes`, `expiresAt`), read at
   * start and again whenever it changes: a removed or changed token stops working at once and its
   * sessions end; a bad edit keeps the last good tokens.
   */
  tokenFile?: string;
  /** The token file's stat is polled this often besides watching its folder; 2 s by default. */
  tokenFilePollMs?: number;
  /** The public base URL clients reach codemux at (`https://codemux.example.com`): the OAuth resource and audience, the base of links, and where per-principal downstream logins come back (`/oauth/callback`). */
  publicUrl?: string;
  /** Accept OAuth 2.1 access tokens (JWTs) of this authorization server beside the static tokens; needs `publicUrl`. */
  oauth?: OAuthOptions;
  /** The URL the other instances reach this one at (`http://codemux-a:3920`): its host is accepted like the public URL's. */
  instanceUrl?: string;
  /** Serve a non-loopback address without tokens (an authenticating proxy in front). */
  insecureNoAuth?: boolean;
  /** Accept `?apikey=TOKEN` (seed 002's clients); true by default. Headers are preferred. */
  allowQueryToken?: boolean;
  /** No MCP sessions: a fresh transport per POST (behind a load balancer); GET answers 405. */
  stateless?: boolean;
  /** Legacy HTTP+SSE at /sse and /messages; true by default. */
  legacySse?: boolean;
  /** The REST gateway at /v1; true by default. */
  rest?: boolean;
  /** Seed 002's paths (/retrieve_tools, /call, /tools, /health...) at the root. */
  compatRoutes?: boolean;
  /** Origins allowed to call from a browser; turns CORS on for them ("*" for any). Off when empty. */
  corsOrigins?: string[];
  /** Extra Host header names accepted (a reverse proxy's public name); "*" turns the Host check off. */
  allowedHosts?: string[];
  /** The mode MCP sessions serve (`code`, `passthrough`...); the core's when absent. */
  mode?: string;
  /** Open MCP sessions at most (Streamable HTTP and SSE together); 100 by default. */
  maxSessions?: number;
  /** Open MCP sessions one principal may hold; a quarter of `maxSessions` (at least 2) by default. */
  maxSessionsPerPrincipal?: number;
  /** Limits for named principals, over the per-principal defaults: `{ "token:ci": { sessions: 40 } }` (a bare token name `ci` means `token:ci`). */
  principalLimits?: Record<string, PrincipalLimits>;
  /** A session with no request for this long is closed, with its open streams; 30 minutes by default. */
  sessionIdleMs?: number;
  /** Request bodies larger than this are refused with 413; 4 MiB by default. */
  maxBodyBytes?: number;
  /** Time to send the request headers; 10 s by default (slow-header clients are cut off). */
  headersTimeoutMs?: number;
  /** Time to send the whole request (headers and body); 30 s by default. Responses and streams are not limited. */
  requestTimeoutMs?: number;
  /** SSE comment lines every this many ms keep idle streams open through proxies; 15 s by default, 0 off. */
  keepAliveMs?: number;
  /** Bytes of recent messages kept per session so a client can resume its stream (Last-Event-ID); 1 MiB by default. */
  eventStoreBytes?: number;
  /** Shutdown waits this long for requests in flight before closing them; 10 s by default. */
  shutdownGraceMs?: number;
  /** Open connections at most; 1024 by default. */
  maxConnections?: number;
  /**
   * Open connections from one client address at most; a quarter of `maxConnections` (256) by default, room for a team
   * behind one NAT or proxy. At the limit the address's longest idle keep-alive connection is closed first, and health
   * probes are never refused. The default share is work-conserving: past it an address borrows free connections while
   * a share's room stays free and no other address needed that room in the last minute (an idle borrowed connection is
   * closed for one that does). A limit given here binds always.
   */
  maxConnectionsPerAddress?: number;
  /**
   * Reverse proxies (addresses or CIDR ranges, e.g. `127.0.0.1`, `10.0.0.0/8`) whose `X-Forwarded-For`
   * names the client address; from any other peer the header is ignored. None by default.
   */
  trustedProxies?: string[];
  /** A connection that has sent no authenticated request within this time is closed; 5 s by default. */
  authTimeoutMs?: number;
  /** Where request log lines go; JSON lines on stderr by default. */
  log?: LogSink;
  /**
   * The least severe request log line written (`error`, `warn`, `info`, `debug`): a line below it is not
   * built at all (at `warn` the access log, level info, is skipped; a failed request's line, level error, is
   * written). Every line by default; the sink may filter further.
   */
  logLevel?: LogLevel;
  /** Re-reads the config and applies it (`POST /restart` of the compat routes, and the watcher). */
  reload?: () => Promise<ReloadSummary>;
  /** Why the config file's last edit was refused (the last good config keeps serving), until an edit applies: shown in /readyz and on the admin page. */
  reloadRefused?: () => string | undefined;
  /** What the admin page at /ui shows beside the core's own state: the pin plugin's quarantine, the background jobs. */
  ui?: UiSources;
  /** One of several instances behind a load balancer, sharing state: instance-scoped session ids, forwarding, the state's health. */
  scaleOut?: ScaleOut;
}

/** What one principal may hold; an unset field keeps the default. */
export interface PrincipalLimits {
  /** Open MCP sessions. */
  sessions?: number;
}

export interface ResolvedOptions {
  host: string;
  port: number;
  tokens: TokenSpec[];
  tokenFile: string | undefined;
  tokenFilePollMs: number;
  publicUrl: string | undefined;
  oauth: (OAuthOptions & { audience: string[] }) | undefined;
  insecureNoAuth: boolean;
  allowQueryToken: boolean;
  stateless: boolean;
  legacySse: boolean;
  rest: boolean;
  compatRoutes: boolean;
  corsOrigins: string[];
  allowedHosts: string[];
  anyHost: boolean;
  mode: string | undefined;
  maxSessions: number;
  maxSessionsPerPrincipal: number;
  /** `maxSessionsPerPrincipal` was set (not the default share): a limit that binds always, never borrowed past. */
  maxSessionsPerPrincipalSet: boolean;
  principalLimits: Record<string, PrincipalLimits>;
  sessionIdleMs: number;
  maxBodyBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveMs: number;
  eventStoreBytes: number;
  shutdownGraceMs: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** Whether `maxConnectionsPerAddress` was given: a given limit binds always; the default share only while another address waits. */
  maxConnectionsPerAddressSet: boolean;
  trustedProxies: string[];
  authTimeoutMs: number;
  log: LogSink;
  /** Whether a request log line of this level is written (see `logLevel`). */
  writesLevel: (level: LogLevel) => boolean;
  reload: (() => Promise<ReloadSummary>) | undefined;
  reloadRefused: () => string | undefined;
  ui: UiSources;
  scaleOut: ScaleOut | undefined;
}

export const DEFAULTS = {
  maxSessions: 100,
  sessionIdleMs: 30 * 60_000,
  maxBodyBytes: 4 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveMs: 15_000,
  eventStoreBytes: 1024 * 1024,
  shutdownGraceMs: 10_000,
  maxConnections: 1024,
  authTimeoutMs: 5_000,
  tokenFilePollMs: 2_000,
} as const;

/** A principal's default share of a limit: a quarter, at least 2, so no one principal can take every slot. */
export function principalShare(limit: number): number {
  return Math.max(2, Math.floor(limit / 4));
}

function positive(name: string, value: number, min = 1): number {
  if (!Number.isFinite(value) || value < min) throw new RangeError(`${name} must be a number of at least ${min} (got ${String(value)}).`);
  return value;
}

export function resolveOptions(options: HttpServeOptions, log: LogSink): ResolvedOptions {
  const host = options.host ?? DEFAULT_HOST;
  const publicUrl = options.publicUrl === undefined ? undefined : resolvePublicUrl(options.publicUrl);
  // The public URL's host and the instance URL's are by definition ones this server answers to (behind its proxy, from its peers).
  const ownUrls = [publicUrl, options.instanceUrl === undefined ? undefined : resolveInstanceUrl(options.instanceUrl)].filter((u) => u !== undefined);
  const extraHosts = [...(options.allowedHosts ?? []), ...ownUrls.map((u) => new URL(u).hostname.replace(/^\[|\]$/g, ""))].map((h) => h.toLowerCase());
  const maxSessions = positive("maxSessions", options.maxSessions ?? DEFAULTS.maxSessions);
  const maxConnections = positive("maxConnections", options.maxConnections ?? DEFAULTS.maxConnections);
  const principalLimits = Object.fromEntries(Object.entries(options.principalLimits ?? {}).map(([key, limits]) => [principalOfName(key), limits]));
  for (const [name, limits] of Object.entries(principalLimits)) {
    if (limits.sessions !== undefined) positive(`principalLimits.${name}.sessions`, limits.sessions);
  }
  return {
    host,
    port: options.port ?? DEFAULT_PORT,
    tokens: options.tokens ?? [],
    tokenFile: options.tokenFile,
    tokenFilePollMs: positive("tokenFilePollMs", options.tokenFilePollMs ?? DEFAULTS.tokenFilePollMs, 0),
    publicUrl,
    oauth: options.oauth ? resolveOAuth(options.oauth, publicUrl) : undefined,
    insecureNoAuth: options.insecureNoAuth ?? false,
    allowQueryToken: options.allowQueryToken ?? true,
    stateless: options.stateless ?? false,
    legacySse: options.legacySse ?? true,
    rest: options.rest ?? true,
    compatRoutes: options.compatRoutes ?? false,
    corsOrigins: options.corsOrigins ?? [],
    allowedHosts: [...defaultAllowedHosts(host), ...extraHosts.filter((h) => h !== "*")],
    anyHost: extraHosts.includes("*"),
    mode: options.mode,
    maxSessions,
    maxSessionsPerPrincipal: positive("maxSessionsPerPrincipal", options.maxSessionsPerPrincipal ?? principalShare(maxSessions)),
    maxSessionsPerPrincipalSet: options.maxSessionsPerPrincipal !== undefined,
    principalLimits,
    sessionIdleMs: positive("sessionIdleMs", options.sessionIdleMs ?? DEFAULTS.sessionIdleMs, 100),
    maxBodyBytes: positive("maxBodyBytes", options.maxBodyBytes ?? DEFAULTS.maxBodyBytes, 1024),
    headersTimeoutMs: positive("headersTimeoutMs", options.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs, 100),
    requestTimeoutMs: positive("requestTimeoutMs", options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs, 100),
    keepAliveMs: positive("keepAliveMs", options.keepAliveMs ?? DEFAULTS.keepAliveMs, 0),
    eventStoreBytes: positive("eventStoreBytes", options.eventStoreBytes ?? DEFAULTS.eventStoreBytes, 1024),
    shutdownGraceMs: positive("shutdownGraceMs", options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs, 0),
    maxConnections,
    // A quarter, as for a principal's share: no one address takes every connection, and a team behind one NAT fits.
    maxConnectionsPerAddress: positive("maxConnectionsPerAddress", options.maxConnectionsPerAddress ?? principalShare(maxConnections)),
    maxConnectionsPerAddressSet: options.maxConnectionsPerAddress !== undefined,
    trustedProxies: options.trustedProxies ?? [],
    authTimeoutMs: positive("authTimeoutMs", options.authTimeoutMs ?? DEFAULTS.authTimeoutMs, 100),
    log,
    writesLevel: levelFilter(options.logLevel),
    reload: options.reload,
    reloadRefused: options.reloadRefused ?? (() => undefined),
    ui: options.ui ?? {},
    scaleOut: options.scaleOut,
  };
}

/** A public URL without its trailing slash; only http(s), no query or fragment. */
function resolvePublicUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RangeError(`publicUrl "${text.slice(0, 100)}" is not a URL; give the address clients use, e.g. https://codemux.example.com.`);
  }
  // codemux serves its routes at the root, and RFC 9728 puts the metadata of a path-suffixed resource elsewhere: an origin only.
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.pathname !== "/" || url.search || url.hash || url.username)
    throw new RangeError(
      `publicUrl "${text.slice(0, 100)}" must be an http(s) origin (scheme, host and port) without a path, query or credentials, e.g. https://codemux.example.com.`,
    );
  return url.href.replace(/\/+$/, "");
}

/** The instance URL as given, once it is an http(s) URL. */
function resolveInstanceUrl(text: string): string {
  if (URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)) return text;
  throw new RangeError(
    `instanceUrl "${text.slice(0, 100)}" is not an http(s) URL; give the address the other instances reach this one at, e.g. http://codemux-a:3920.`,
  );
}

function resolveOAuth(oauth: OAuthOptions, publicUrl: string | undefined): OAuthOptions & { audience: string[] } {
  if (publicUrl === undefined)
    throw new RangeError("oauth needs publicUrl: the URL clients reach codemux at is the resource its access tokens must be issued for.");
  // The MCP SDK client asks for the resource of /mcp's own metadata (publicUrl/mcp); a REST client for the base.
  return { ...oauth, audience: oauth.audience?.length ? oauth.audience : [publicUrl, `${publicUrl}/mcp`] };
}

export type { LogRecord };

function levelFilter(least: LogLevel | undefined): (level: LogLevel) => boolean {
  if (least === undefined) return () => true;
  const rank = LOG_LEVELS.indexOf(least);
  if (rank < 0) throw new RangeError(`logLevel must be one of ${LOG_LEVELS.join(", ")} (got ${String(least)}).`);
  return (level) => LOG_LEVELS.indexOf(level) <= rank;
}
