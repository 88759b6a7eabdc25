import type { ClientCapabilities, InputRound, Logger } from "@codemux/core";
import type { Progress } from "@modelcontextprotocol/client";
import type { BackoffOptions } from "./backoff";
import type { CallerSession } from "./channel";
import type { RememberedEra } from "./era-verdict";
import type { TransportFactory } from "./transports";

/**
 * `skipped`: never started, because starting it would be unsafe (it is codemux itself); `error` says why.
 * `idle`: a lazy server not started yet, or stopped after being unused; the next call starts it.
 */
export type ServerState = "connecting" | "ready" | "reconnecting" | "failed" | "skipped" | "closed" | "idle";

export interface ServerStatus {
  name: string;
  /** A short name for this connection, `c1`, `c2`... in the order the servers were added; kept while the pool runs. */
  alias: string;
  /** 8 hex digits of a hash of the server's resolved entry: it changes when the entry does (a reloaded config). */
  id: string;
  state: ServerState;
  transport: "stdio" | "http" | "sse";
  /** The command line or URL, with secrets masked; env and header values never appear. */
  endpoint: string;
  toolCount: number;
  /** Why the server failed or dropped: set in `failed`, `reconnecting` and `skipped` (secrets masked). */
  error?: string;
  /** The state in words where it is no failure: `starting (3 s)` while connecting, what `idle` and `closed` mean. */
  detail?: string;
  /** What the config parser noticed about this entry (unknown keys, with a did-you-mean), and what its last tool list broke (a bad field dropped). */
  warnings?: string[];
  /** The last lines the server wrote to stderr (stdio only; secrets masked). */
  stderrTail: string[];
  /** How many times the connection was re-established after the first. */
  restarts: number;
  serverInfo?: { name: string; version: string };
  /** The protocol version the live connection speaks: `2025-11-25` (and earlier) for the 2025 era, `2026-07-28` for the 2026 one. */
  protocol?: string;
  /** The server's era as last found (probed, or remembered), dated: what a restart passes back instead of probing again. */
  era?: RememberedEra;
  /** What the server said about its tools when it connected (its `instructions`), as it said it. */
  instructions?: string;
  /** When the tool list was last fetched (ISO 8601). */
  lastRefreshAt?: string;
  /** Set for an isolated server: one instance per `principal` or `session`; its status is its listing connection's. */
  isolation?: "principal" | "session";
  /** How many instances of an isolated server run now. */
  instances?: number;
  /** Set for a server whose instances act as their principal: its resources and prompts are each principal's own, never the listing connection's. */
  credentials?: "per-principal";
}

/** Hints from the tool's annotations that make a retry after the request was sent safe. */
export interface RetryHints {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
  /** Overrides the server's `callTimeoutMs`. */
  timeoutMs?: number;
  /** The tool's annotations: with `readOnlyHint` or `idempotentHint` a call is retried on any transient failure. */
  annotations?: RetryHints;
  /** The client session making the call: an isolated server (`isolation`) serves it on that session's or principal's own instance. */
  session?: CallerSession;
  /** The calling client's capabilities: a 2026-era server gets those codemux can relay, in the request's `_meta`. */
  clientCapabilities?: ClientCapabilities;
  /** Set when the caller answers a 2026 server's `input_required` itself (see `ChannelCall.inputRequired`): the round to send, `{}` for the first. */
  inputRequired?: InputRound;
  /** The W3C trace context the request carries in its `_meta` (set by the call's own span). */
  traceMeta?: Record<string, string> | undefined;
}

/** What the relay is told with a server's request besides the request: its signal, whose instance sent it, and for whose request. */
export interface RelayContext {
  signal: AbortSignal;
  /** Set when an isolated server's instance sent the request. */
  owner?: InstanceOwner | undefined;
  /**
   * Set when the server said which request it asks about: it came on the stream of a request made for
   * this caller (the `CallOptions.session` given with it), or during a 2026 server's task of that caller's call.
   */
  caller?: CallerSession | undefined;
}

/** Whose instance of an isolated server a connection is: a principal's, or (with `session`) one client session's. */
export interface InstanceOwner {
  principal: string;
  session?: string;
}

/**
 * Requests a downstream server sends to its client (sampling, elicitation, roots), relayed by codemux
 * to the right client session. Only the capabilities given here are declared to the servers.
 */
export interface ServerRequestRelay {
  capabilities: ClientCapabilities;
  /** Answers one request of `server` (of `owner`'s instance when it is isolated); rejects (an error with a JSON-RPC code) when no client session can answer it. */
  handle(server: string, request: { method: string; params?: Record<string, unknown> }, context: RelayContext): Promise<Record<string, unknown>>;
}

export interface ConnectionOptions {
  createTransport?: TransportFactory;
  /** Relays sampling, elicitation and roots requests from the servers; without it they declare none of these. */
  relay?: ServerRequestRelay;
  logger?: Logger;
  clientInfo?: { name: string; version: string };
  backoff?: BackoffOptions;
  /** Quiet period before a `tools/list_changed` triggers a refresh. */
  listChangedDebounceMs?: number;
  /** Default re-list interval for servers that do not send `tools/list_changed` (0 = off; a server's `refreshIntervalMs` wins). */
  refreshIntervalMs?: number;
  /** Delays before each retry of a transiently failed call; its length is the number of retries. `[]` turns retries off. */
  retryDelaysMs?: readonly number[];
  /** Every server is lazy (`--lazy`): not started until a call needs it. A server's own `"lazy": true` makes just that one lazy. */
  lazy?: boolean;
  /** Whether a lazy server may wait for its first call: only when its tools are known without it (from the cached catalog). Always, when absent. */
  deferStart?: (server: string) => boolean;
  /** A lazy server unused this long is stopped (0 = never); a server's `idleStopMs` wins. */
  idleStopMs?: number;
  /** The environment codemux runs in (proxy variables, what stdio servers inherit, the nesting marker, `CODEMUX_CALL_LANE`); `process.env` by default. */
  env?: NodeJS.ProcessEnv;
  /**
   * Whether stdio servers' `tools/call` takes the call lane rather than the SDK client's request path (same
   * answers, less CPU a call). When absent, on unless `CODEMUX_CALL_LANE` is `0`, `false` or `off`.
   */
  callLane?: boolean;
  /** Set on an isolated server's instance: whose it is, passed to the relay with each of its requests. */
  owner?: InstanceOwner;
  /** A server's era as remembered from an earlier run (the catalog cache): connecting with it skips the probe. */
  priorEra?: (server: string) => RememberedEra | undefined;
  /** How long the era probe waits for a stdio server's answer before taking it for a 2025 one (2 s by default). */
  probeTimeoutMs?: number;
  /** The floor under a 2026 server's `tools/list` ttlMs when it sets the re-listing interval (5 s by default). */
  minListTtlMs?: number;
}
