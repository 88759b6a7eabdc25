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
      [META_PROCESSED_AT]: new Date(request.startedAt).toISOString(),
      [META_DURATION_MS]: Math.max(0, request.endedAt - request.startedAt),
    },
  };
}
