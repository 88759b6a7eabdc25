/** A JSON-RPC id. */
export type RequestId = string | number;

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** What a connection learns from the streams of its POSTs: which of its requests each server request came on. */
export interface StreamRequests {
  /** Whether the streams are read now (a 2026-era connection gets no server requests: its streams pass untouched). */
  watching(): boolean;
  /** The server sent request `request` on the stream that answers the request codemux sent as `carrier`. */
  carried(request: RequestId, carrier: RequestId): void;
}

/** A server request bigger than this is not read off the stream (it is relayed as one that names no request). */
const MAX_EVENT_CHARS = 1024 * 1024;

/**
 * `fetch` that reads the SSE stream answering each POST as it passes (its bytes unchanged) and reports
 * every server request on it with the id of the request that POST carried. Over Streamable HTTP a 2025
 * server sends a question asked during a request on that request's own stream, which names the call
 * exactly; the SDK client does not say which stream a message came on, so the fetch under it does. The
 * POST's body is parsed only when its stream carries a request.
 */
export function watchingStreams(fetch: FetchLike, streams: StreamRequests): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (init?.method !== "POST" || !response.ok || response.body === null || !streams.watching()) return response;
    if (!response.headers.get("content-type")?.toLowerCase().startsWith("text/event-stream")) return response;
    let carrier: RequestId | undefined | null = null;
    const found = (request: RequestId) => {
      if (carrier === null) carrier = requestIdOf(init.body);
      if (carrier !== undefined) streams.carried(request, carrier);
    };
    return new Response(response.body.pipeThrough(requestsIn(found)), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The id of the one request a POST body carries, or undefined (a batch, a notification, not JSON). */
function requestIdOf(body: RequestInit["body"]): RequestId | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Passes an SSE stream's bytes on unchanged after reading its events' data, each line at most
 * MAX_EVENT_CHARS (a longer one is skipped without being kept, so a large result costs one pass).
 */
function requestsIn(found: (request: RequestId) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let pending = "";
  let skipping = false;
  let data = "";
  let tooLong = false;
  const line = (text: string) => {
    const clean = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (clean === "") {
      if (!tooLong && data.includes('"method"')) reportRequest(data, found);
      data = "";
      tooLong = false;
    } else if (clean.startsWith("data:")) {
      const value = clean.slice(clean.startsWith("data: ") ? 6 : 5);
      data = data === "" ? value : `${data}\n${value}`;
      if (data.length > MAX_EVENT_CHARS) tooLong = true;
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      const text = decoder.decode(chunk, { stream: true });
      let start = 0;
      for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
        if (skipping) skipping = false;
        else line(pending + text.slice(start, end));
        pending = "";
        start = end + 1;
      }
      if (!skipping && pending.length + text.length - start > MAX_EVENT_CHARS) {
        skipping = true;
        tooLong = true;
        pending = "";
      } else if (!skipping) pending += text.slice(start);
      controller.enqueue(chunk);
    },
  });
}

/** Reports the event's message when it is a request (a method and an id). */
function reportRequest(data: string, found: (request: RequestId) => void): void {
  let message: { method?: unknown; id?: unknown };
  try {
    message = JSON.parse(data) as typeof message;
  } catch {
    return;
  }
  if (typeof message?.method === "string" && (typeof message.id === "string" || typeof message.id === "number")) found(message.id);
}
