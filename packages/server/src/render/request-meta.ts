import { withoutServerInfo, type ToolResult } from "@codemux/core";

/** Keys of `_meta` on every tools/call answer, under codemux's prefix (MCP's key format: `prefix/name`, and `codemux` is no MCP-reserved label). */
export const META_REQUEST_ID = "codemux/requestId";
export const META_PROCESSED_AT = "codemux/processedAt";
export const META_DURATION_MS = "codemux/durationMs";

/** The request an answer belongs to: the client's own id for it, and when codemux began and finished it (milliseconds since the epoch). */
export interface AnsweredRequest {
  id: string;
  startedAt: number;
  endedAt: number;
}

/**
 * The answer with its request's id, start and duration in `_meta`, over any the result came with but the downstream
 * server's name and version (the answer is codemux's): a new object
 * each time, so a result a middleware keeps and hands to another caller (a cache) never carries one request's id to another.
 */
export function withRequestMeta(result: ToolResult, request: AnsweredRequest): ToolResult {
  const answer = withoutServerInfo(result);
  return {
    ...answer,
    _meta: {
      ...answer._meta,
      [META_REQUEST_ID]: request.id,
      [META_PROCESSED_AT]: isoTime(request.startedAt),
      [META_DURATION_MS]: Math.max(0, request.endedAt - request.startedAt),
    },
  };
}

/** The last second `isoTime` formatted, and its text up to the milliseconds ("2026-12-07T10:04:50."). */
let isoSecond = Number.NaN;
let isoPrefix = "";
/** Years 0000-9999, where `toISOString` has this one layout. */
const LAST_FOUR_DIGIT_MS = 253_402_300_800_000;

/**
 * `new Date(ms).toISOString()`, made from the second's text when it is the last one's: a Date and its formatting
 * cost about a microsecond, on every answer's path. Anything else (fractions, other layouts) goes to `toISOString`.
 */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= LAST_FOUR_DIGIT_MS) return new Date(ms).toISOString();
  const millis = ms % 1000;
  const second = ms - millis;
  if (second !== isoSecond) {
    isoPrefix = new Date(second).toISOString().slice(0, 20);
    isoSecond = second;
  }
  return `${isoPrefix}${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
}
