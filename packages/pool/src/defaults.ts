/** Every default of @codemux/pool in one place; options and config keys override them. */

/** Time a call may go without an answer or a progress notification. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Time a server has to start, answer `initialize` and list its tools. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** Re-list a server's tools this often unless it proves it sends `tools/list_changed` (0 turns it off). */
export const DEFAULT_REFRESH_INTERVAL_MS = 5 * 60_000;
/** Time the `server/discover` probe waits before a silent stdio server is taken for a 2025 one: short, as it delays every first start of such a server. */
export const DEFAULT_PROBE_TIMEOUT_MS = 2_000;
/** A remembered 2025 verdict older than this is probed again (a server may have moved to 2026 while it still answers initialize). */
export const LEGACY_VERDICT_MAX_AGE_MS = 24 * 60 * 60_000;
/** A 2026 server's `tools/list` ttlMs never makes codemux re-list it more often than this. */
export const MIN_LIST_TTL_MS = 5_000;
/** Quiet period before a `tools/list_changed` triggers a refresh. */
export const DEFAULT_LIST_CHANGED_DEBOUNCE_MS = 100;
/** Restart backoff after a server drops: first delay, cap, and automatic attempts. */
export const DEFAULT_BACKOFF = { initialMs: 500, maxMs: 30_000, maxAttempts: 5 } as const;
/** A server up this long has its failure count reset. */
export const STABLE_AFTER_MS = 30_000;
/** Delays before the retries of a call that failed transiently (two retries). */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000];
/** Time a stdio server's process group gets between SIGTERM and SIGKILL. */
export const DEFAULT_KILL_GRACE_MS = 1_000;
/** Time a stdio server gets to exit after its stdin is closed, before SIGTERM. */
export const STDIN_CLOSE_GRACE_MS = 1_000;
/** Most `tools/list` pages one listing follows: a server whose cursors never end fails the listing instead of growing it without bound. */
export const MAX_TOOL_LIST_PAGES = 1_000;
/** Resources one 2026-era connection's listen stream may be subscribed to at once: each URI stays in its filter until unsubscribed. */
export const MAX_LISTEN_RESOURCES = 1_000;
/** Largest single JSON-RPC message accepted from a stdio server. */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
/** Stderr lines kept per server, and the longest line kept. */
export const STDERR_LINES = 50;
export const STDERR_LINE_LENGTH = 500;
/** Longest text snippet of an HTTP error body shown in errors and status. */
export const HTTP_SNIPPET_CHARS = 160;
/** The environment variable that tells a process how many codemux pools are above it. */
export const DEPTH_VARIABLE = "CODEMUX_DEPTH";
/** A codemux this deep (started by a server of a codemux started by a server of codemux) starts no stdio servers. */
export const MAX_SPAWN_DEPTH = 2;

/** A lazy server unused this long is stopped; it starts again on its next call. */
export const DEFAULT_IDLE_STOP_MS = 10 * 60_000;

/** Instances an isolated server (`isolation: "principal"` or `"session"`) runs at once unless its entry's `maxInstances` says otherwise. */
export const DEFAULT_MAX_INSTANCES = 16;
/** The most `maxInstances` may be: each instance may be a process. */
export const MAX_INSTANCES = 1_000;
