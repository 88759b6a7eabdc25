/** Every default of @codemux/server in one place; the server README's budget table lists them. */

/** Results larger than this (bytes of JSON) are kept and previewed instead of returned whole. */
export const DEFAULT_LARGE_RESULT_BYTES = 64 * 1024;
/** The most a threshold may let through inline, per call (`resultSizeThreshold`) or for all (`--spill-bytes`): never "unlimited". */
export const MAX_INLINE_BYTES = 1024 * 1024;
/** How long a kept result stays readable. */
export const DEFAULT_RESULT_TTL_MS = 30 * 60_000;
/** Total bytes of kept results; the oldest go first past this. */
export const DEFAULT_RESULT_STORE_BYTES = 1024 * 1024 * 1024;
/** How long a call waits for the one server it needs while that server is still connecting. */
export const DEFAULT_STARTUP_WAIT_MS = 15_000;
/** How long, after start, a search or module listing waits for servers with nothing cached; after that it answers from what is there. */
export const DEFAULT_DISCOVERY_WAIT_MS = 3_000;
/** Ranking costs time on the shared event loop in proportion to the query: longer than any task description. */
export const MAX_QUERY_CHARS = 1_000;
/** Longer than any `server__tool` name; a longer one is refused before the catalog looks for close names. */
export const MAX_TOOL_NAME_CHARS = 512;
/** A read_result grep pattern longer than this is refused before it is compiled. */
export const MAX_GREP_PATTERN_CHARS = 1_000;
/** A regular expression may run this long over a kept result (vm interrupts it; the main loop could not). */
export const GREP_TIMEOUT_MS = 1_000;
/** Lines longer than this are clipped in read_result pages. */
export const MAX_LINE_CHARS = 1_000;
/** One read_result page, and one preview, at most. */
export const MAX_PAGE_CHARS = 24_000;
/** Lines and characters of the preview that replaces a kept result. */
export const PREVIEW_LINES = 40;
export const PREVIEW_CHARS = 2_000;
/** Context lines around a grep match, at most. */
export const MAX_GREP_CONTEXT = 20;
/** Grep stops collecting matches past this many (the answer would be cut anyway). */
export const MAX_GREP_MATCHES = 10_000;
/**
 * One-line JSON up to this size is laid out one value a line for paging; a larger one is kept as it is. It is parsed on
 * the event loop, where a few MB of tiny nodes (`[[1],[1],...]`) cost seconds: the bound keeps that under ~0.2 s.
 */
export const MAX_RELAYOUT_BYTES = 2 * 1024 * 1024;
/** Wait before telling passthrough clients that the tool list changed, so a burst of changes is one notice. */
export const LIST_CHANGED_DEBOUNCE_MS = 200;
/** Resource subscriptions one client session may hold at once (any URI a template matches can be subscribed to). */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1_000;
/** Catalog cache writes are batched this long after a change. */
export const CACHE_SAVE_DELAY_MS = 500;
/** A server's remembered era (its `server/discover` answer) bigger than this as JSON is not written to the catalog cache: the server is probed at the next start instead. */
export const MAX_CACHED_ERA_BYTES = 64 * 1024;
/** Default and bounds of execute_code's timeoutMs. */
export const DEFAULT_EXECUTE_TIMEOUT_MS = 30_000;
export const MAX_EXECUTE_TIMEOUT_MS = 60_000;
/** Arguments validated against a downstream schema: strings longer than this are refused before any pattern runs. */
export const MAX_VALIDATED_STRING_CHARS = 1024 * 1024;
/** Arguments nested deeper than this, or with more values than this, are refused before validation. */
export const MAX_ARGUMENT_DEPTH = 64;
export const MAX_ARGUMENT_VALUES = 100_000;
/**
 * How long after a principal's call on a server ends a question or log line from that server that names
 * no request may still be about it: while this lasts, another principal's call there is not taken as its
 * cause. Short, since it is how long one principal's call can get another's question refused.
 */
export const LATE_REQUEST_WINDOW_MS = 2_000;

/** Rounds of questions one call to a 2026-era server may ask before codemux gives up on it (the SDK server's own bound). */
export const MAX_INPUT_ROUNDS = 8;
/** Bytes of a retry's requestState codemux reads at most (its own envelope with a server's state inside). */
export const MAX_REQUEST_STATE_BYTES = 64 * 1024;
/** How long a requestState codemux signs may be echoed back: the time a user has to answer a question. */
export const REQUEST_STATE_TTL_MS = 10 * 60_000;
/** How long a 2026-07-28 client has to retry a call parked on a 2025 server's question before it is cancelled. */
export const PARKED_CALL_TTL_MS = 5 * 60_000;
/** Calls parked at once, in all and per principal: each holds a live downstream call. */
export const MAX_PARKED_CALLS = 256;
export const MAX_PARKED_CALLS_PER_PRINCIPAL = 8;
/** Bytes of JSON of one parked question, kept until the retry. */
export const MAX_PARKED_QUESTION_BYTES = 256 * 1024;
