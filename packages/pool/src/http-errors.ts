import { SdkHttpError, SseError } from "@modelcontextprotocol/client";
import { HTTP_SNIPPET_CHARS } from "./defaults";
import { maskUrl } from "@codemux/core";

const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};
const HINTS: Record<number, string> = {
  401: "check the credentials in its headers",
  403: "the credentials are not allowed here",
  404: "check the URL's path (often /mcp, or /sse for the legacy transport)",
  405: 'the URL may point at the wrong transport (try "type": "sse" or "http")',
};
const HTML = /<\s*(?:!doctype|html|head|body|title|div|p|h1|pre|center)\b/i;

export interface NetworkCause {
  code: string | undefined;
  message: string;
}

/** fetch() reports "fetch failed" and keeps the reason (ECONNREFUSED, ENOTFOUND, a TLS failure...) in its cause. */
export function networkCause(error: unknown): NetworkCause | undefined {
  if (!(error instanceof TypeError) || !/fetch failed/i.test(error.message)) return undefined;
  let cause = error.cause as (Error & { code?: string; errors?: unknown[] }) | undefined;
  // Several addresses (::1 and 127.0.0.1 for localhost) fail together as an AggregateError.
  if (cause && !cause.message && Array.isArray(cause.errors) && cause.errors[0] instanceof Error) cause = cause.errors[0] as Error & { code?: string };
  const code = cause?.code;
  const message = cause?.message || code || "network error";
  return { code, message };
}

/** "cannot reach URL: connection refused (connect ECONNREFUSED 127.0.0.1:9)" and the like. */
export function describeNetworkFailure(error: unknown, url: string): string | undefined {
  const cause = networkCause(error);
  if (!cause) return undefined;
  const what =
    cause.code === "ECONNREFUSED"
      ? "connection refused"
      : cause.code === "ENOTFOUND" || cause.code === "EAI_AGAIN"
        ? "host not found"
        : cause.code === "ECONNRESET"
          ? "connection reset"
          : cause.code === "ETIMEDOUT" || cause.code === "UND_ERR_CONNECT_TIMEOUT"
            ? "connection timed out"
            : isTlsCode(cause.code)
              ? "TLS failure"
              : cause.code === "PROXY_CONNECT_FAILED"
                ? "proxy refused"
                : undefined;
  const detail = cause.code && !cause.message.includes(cause.code) ? `${cause.message} (${cause.code})` : cause.message;
  return `cannot reach ${maskUrl(url)}: ${what ? `${what} (${detail})` : detail}`;
}

export function isTlsCode(code: string | undefined): boolean {
  return code !== undefined && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code);
}

/** The HTTP status of an SDK transport error, if it has one. */
export function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof SdkHttpError) return error.status >= 100 ? error.status : undefined;
  if (error instanceof SseError) {
    if (typeof error.code === "number" && error.code >= 100) return error.code;
    const inMessage = /\b(?:HTTP |status code \(?)(\d{3})\b/.exec(error.message);
    return inMessage ? Number(inMessage[1]) : undefined;
  }
  return undefined;
}

/** "HTTP 404 Not Found from URL: <short text>", never an HTML page. */
export function describeHttpError(error: unknown, url: string): string | undefined {
  if (!(error instanceof SdkHttpError || error instanceof SseError)) return undefined;
  const status = httpStatusOf(error);
  const body = error.message
    .replace(/^SSE error: /, "")
    .replace(/^(?:Error POSTing to endpoint(?: \(HTTP \d+\))?|Failed to open SSE stream|Non-200 status code \(\d+\)|Failed to terminate session)(?::\s*)?/, "");
  if (status === undefined) {
    // EventSource reports a failed connection as text: "TypeError: fetch failed: connect ECONNREFUSED ...".
    const network = /^(?:TypeError: )?fetch failed:?\s*(.*)$/s.exec(body.trim());
    if (network) {
      const cause = network[1]!.trim();
      const what = /ECONNREFUSED/.test(cause) ? "connection refused" : /ENOTFOUND|EAI_AGAIN/.test(cause) ? "host not found" : undefined;
      return `cannot reach ${maskUrl(url)}: ${what ? `${what} (${cause})` : cause || "network error"}`;
    }
    return `HTTP error from ${maskUrl(url)}: ${snippet(body) || "no details"}`;
  }
  const text = snippet(body);
  const reason = REASONS[status] ?? "";
  const repeated = text.toLowerCase() === reason.toLowerCase() || text === String(status);
  const hint = HINTS[status];
  return `HTTP ${status}${reason ? ` ${reason}` : ""} from ${maskUrl(url)}${text && !repeated ? `: ${text}` : ""}${hint ? ` (${hint})` : ""}`;
}

/** A short, single-line, tag-free excerpt of a response body: a JSON-RPC error's message, an HTML page's title, or the text. */
export function snippet(body: string): string {
  let text = body.trim();
  if (!text) return "";
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === "object" ? parsed.error?.message : (parsed.error ?? parsed.message);
    if (typeof message === "string") text = message;
  } catch {
    // Not JSON.
  }
  if (HTML.test(text)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1] ?? /<h1[^>]*>([^<]*)<\/h1>/i.exec(text)?.[1] ?? "";
    text = title;
  }
  text = text
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > HTTP_SNIPPET_CHARS ? `${text.slice(0, HTTP_SNIPPET_CHARS)}…` : text;
}
