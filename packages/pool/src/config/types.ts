import type { Logger } from "@codemux/core";
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS } from "../defaults";
import type { StderrRing } from "../stderr-ring";

export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS };

export interface StdioTransportSpec {
  type: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface HttpTransportSpec {
  /** `http` is Streamable HTTP; `sse` the legacy HTTP+SSE transport. */
  type: "http" | "sse";
  url: string;
  headers: Record<string, string>;
  /** An HTTP proxy URL for this server, or `false` for none; unset follows HTTPS_PROXY / HTTP_PROXY / NO_PROXY. */
  proxy?: string | false;
  /** The entry's `oauth` block: a pre-registered client and a scope for `codemux auth login` (with the config's top-level `oauth` under it). */
  oauth?: OAuthSettings;
  /** The config's top-level `oauth` block, for an entry without its own: used by logins, but it does not make the entry an OAuth one. */
  oauthDefaults?: OAuthSettings;
  /** Certificate files for this server's HTTPS connections (absolute paths). */
  tls?: TlsSettings;
}

/**
 * A per-server `tls` block: a CA bundle to trust besides the system's (a private CA, a self-signed
 * server), and a client certificate with its key for servers that ask for one (mutual TLS).
 */
export interface TlsSettings {
  ca?: string;
  cert?: string;
  key?: string;
}

/** A per-server `oauth` block; without one, a server that answers 401 still gets a login through dynamic registration. */
export interface OAuthSettings {
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  /** A fixed loopback port for the login callback, for clients registered with one redirect URI. */
  redirectPort?: number;
  /**
   * The HTTPS URL of codemux's client ID metadata document (hosted by the operator: codemux cannot host one), used as
   * the client id where the authorization server says it supports them; elsewhere codemux registers dynamically.
   */
  clientMetadataUrl?: string;
}

export type TransportSpec = StdioTransportSpec | HttpTransportSpec;

/** How many connections one server entry runs: one for everyone (`shared`), one per principal, or one per client session. */
export type Isolation = "shared" | "principal" | "session";

/** One principal's own values for a server with `credentials: "per-principal"`. */
export interface PrincipalCredentials {
  env?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface ToolFilter {
  allow?: string[];
  deny?: string[];
}

/** A validated downstream server, ready for the pool. */
export interface ServerSpec {
  name: string;
  transport: TransportSpec;
  callTimeoutMs: number;
  connectTimeoutMs: number;
  tools: ToolFilter;
  /** Re-list the tools this often when the server does not send `tools/list_changed` (0 = never; unset = the pool's default). */
  refreshIntervalMs?: number;
  /** Not started until a call needs it (its tools come from the cached catalog meanwhile); see `PoolOptions.lazy`. */
  lazy?: boolean;
  /** A lazy server unused this long is stopped (it starts again on the next call); the pool's `idleStopMs` when unset. */
  idleStopMs?: number;
  /**
   * The folders the server is told are its roots when it asks (`roots/list`), as `file://` URIs; unset,
   * the core's default root. A shared server never gets a client's; an isolated one gets its owner's when it has some.
   */
  roots?: string[];
  /**
   * `principal` or `session`: one connection per principal or per client session, started at its first call,
   * stopped after `idleStopMs` unused; the catalog comes from one listing connection that serves no calls. Unset: shared.
   */
  isolation?: Exclude<Isolation, "shared">;
  /**
   * `per-principal`: each principal acts downstream as itself: its instance gets its `perPrincipal` env and headers,
   * and an HTTP server without its own Authorization header the principal's own OAuth login. Implies an isolation.
   */
  credentials?: "per-principal";
  /** Each principal's own `env` (stdio) and `headers` (HTTP), by principal (`token:alice`), over the entry's. */
  perPrincipal?: Record<string, PrincipalCredentials>;
  /**
   * A stdio server isolated per principal or session: each principal's instances get a folder of their own under
   * `under` (named by a hash of the principal, made 0700), and the variable `env` set to that folder, or to `file` in
   * it. The built-in default gives its memory server one over HTTP, so that principals never share a graph.
   */
  ownFolder?: { env: string; under: string; file?: string };
  /** At most this many instances of an isolated server at once; past it a call fails with `InstanceLimitError`. */
  maxInstances?: number;
  /**
   * `2025-11-25`: speak the 2025 era to this server without probing it (a server whose 2026 side is broken, or that
   * mishandles `server/discover`). Unset (or `auto`): the era is found by probing, as the spec says.
   */
  protocol?: "2025-11-25";
  /** Set when the entry is valid JSON but cannot start (an unset variable): the server fails with this message. */
  problem?: string;
  /** What the config parser noticed about this entry (unknown keys); also in `PoolConfig.warnings`. */
  warnings?: string[];
}

export interface PoolConfig {
  /** Where the config came from: a file path, "inline" or "built-in default". */
  source: string;
  servers: ServerSpec[];
  /** Mistakes that do not stop the config (unknown keys, with a did-you-mean), one sentence each, for the CLI to print. */
  warnings?: string[];
}

/** What a transport factory is given besides the spec: the server it connects, where its stderr goes, the logger. */
export interface TransportContext {
  server: string;
  stderr: StderrRing;
  logger: Logger;
  /** codemux's environment: proxy variables, and what stdio servers inherit. */
  env?: NodeJS.ProcessEnv;
  /** Set for a per-principal credentials instance: its OAuth login is this principal's own, never the shared one. */
  principal?: string;
}
