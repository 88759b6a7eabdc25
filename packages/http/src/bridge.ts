import type { JSONRPCMessage, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import type { IncomingMessage, ServerResponse } from "node:http";
import { headerViewOn, RawHeaderView, rawHeaders } from "./header-view";
import { JsonAnswerTransport } from "./json-answers";

/**
 * A POST whose answer is ready within this time, with nothing sent before it, is answered as one
 * JSON body; past it the SSE stream opens (its priming event lets a client resume, keep-alives flow).
 */
export const PLAIN_JSON_WINDOW_MS = 1000;

const FALLBACK_ORIGIN = "http://codemux.invalid";
/** Read once: `CODEMUX_HEADER_VIEW` is a process's setting. */
const HEADER_VIEW = headerViewOn();
const WINDOW_OVER = Symbol("window over");
const NOT_YET = Symbol("not yet");
const EVENT_MESSAGE = Buffer.from("event: message\n");
const DATA = Buffer.from("\ndata: ");

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;

/**
 * Runs one request through the SDK's web-standard Streamable HTTP transport and writes its answer on
 * the Node response, in place of the SDK's Node wrapper (which converts every request and answer
 * through a general-purpose adapter and answers each POST as an SSE stream).
 *
 * A POST's SSE stream that carries exactly one message and then ends (the common case: a call
 * answered with no progress, sampling or logging before its result) is sent as a plain
 * `application/json` body, as the spec allows for any POST (the SDK already refuses a POST whose
 * Accept lacks application/json). One write instead of three, no chunked framing, no SSE parsing in
 * the client. Anything else before the answer, or an answer slower than `windowMs`, opens the SSE
 * stream with everything held so far, so notifications, server requests and resumption are unchanged.
 */
export async function bridgeRequest(transport: WebStandardStreamableHTTPServerTransport, exchange: Exchange): Promise<void> {
  const { req, body } = exchange;
  const request = exchange.request ?? webRequestOf(req);
  if (req.method === "POST" && transport instanceof JsonAnswerTransport) {
    // The seam of `CODEMUX_JSON_ANSWERS`: the answer itself, with no SSE stream made and read back (see JsonAnswerTransport).
    const plain = transport.answerPlain(request, body, { windowMs: exchange.windowMs ?? PLAIN_JSON_WINDOW_MS, oneRequest: exchange.oneRequest === true });
    if (plain) {
      const outcome = await plain;
      if ("message" in outcome) return sendMessage(exchange.res, transport.sessionId, outcome.message);
      return writeResponse(exchange, outcome.response, { plainFirst: false });
    }
  }
  const response = await transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body });
  await writeResponse(exchange, response);
}

/** One request to bridge: the Node pair, the body the gateway parsed (bounded), and the plain-JSON window. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  body?: unknown;
  /** The request head already built for this request (`webRequestOf(req)`), so it is built once per POST. */
  request?: Request;
  windowMs?: number;
  /** The body is known to be one JSON-RPC request by the SDK's schema (the era check tested it). */
  oneRequest?: boolean;
  /** The session's event store: the events of an answer sent as plain JSON are discarded from it (no client can resume that stream). */
  events?: { discard(eventId: string): boolean };
}

/**
 * The method, URL and headers of a request: all the SDK's transport reads when it is handed the
 * parsed body, as it always is here (the gateway reads and bounds bodies). A plain object, not a
 * `Request`, whose construction (a signal, a body stream, URL parsing) cost ~35 µs per request;
 * `body: null` makes an SDK that would read the body anyway see an empty one (a 400), never the socket.
 * `signal`, when given, is the request's (the 2026-07-28 handler cancels a call and ends a listen stream by it).
 */
export function webRequestOf(req: IncomingMessage, signal?: AbortSignal, view = HEADER_VIEW): Request {
  // The seam of `CODEMUX_HEADER_VIEW`: a view over Node's raw headers, or undici's `Headers` of them.
  const headers = view ? new RawHeaderView(req.rawHeaders) : rawHeaders(req.rawHeaders);
  // Origin-form only: a target like `//host/x` or `http://host/x` must not choose the URL's origin.
  const target = req.url?.startsWith("/") && !req.url.startsWith("//") ? req.url : "/";
  const head = { method: (req.method ?? "GET").toUpperCase(), url: `${originOf(req.headers.host)}${target}`, headers, body: null, signal };
  return head as unknown as Request;
}

/** The origins of the last Host headers seen: a client sends the same one on every request, and URL parsing is per request otherwise. */
const origins = new Map<string, string>();
const ORIGINS_KEPT = 64;

/** `http://` + the Host header when it is a plain host[:port] (it passed the gateway's check), else a fixed origin. */
function originOf(host: string | undefined): string {
  if (!host) return FALLBACK_ORIGIN;
  const known = origins.get(host);
  if (known !== undefined) return known;
  const origin = parseOrigin(host);
  // Bounded: a client sending many Host values only evicts.
  if (origins.size >= ORIGINS_KEPT) origins.delete(origins.keys().next().value as string);
  if (host.length <= 300) origins.set(host, origin);
  return origin;
}

function parseOrigin(host: string): string {
  try {
    const url = new URL(`http://${host}/`);
    return url.pathname === "/" && !url.search && !url.hash && !url.username && !url.password ? url.origin : FALLBACK_ORIGIN;
  } catch {
    return FALLBACK_ORIGIN;
  }
}

/** Writes an SDK answer on the Node response: a body as it is, a POST's one-message SSE stream as plain JSON (see `bridgeRequest`). */
export async function writeResponse(
  { req, res, windowMs = PLAIN_JSON_WINDOW_MS, events }: Exchange,
  response: Response,
  { plainFirst = true }: { plainFirst?: boolean } = {},
): Promise<void> {
  const type = response.headers.get("content-type") ?? "";
  if (!response.body || !type.startsWith("text/event-stream")) {
    const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
    if (res.headersSent || res.destroyed) return;
    copyHeaders(res, response.headers);
    if (body) res.setHeader("content-length", body.length);
    res.writeHead(response.status);
    res.end(body);
    return;
  }
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  if (res.destroyed) return cancel();
  res.once("close", cancel);
  try {
    const held: Uint8Array[] = [];
    let next: Promise<ReadResult> | undefined = reader.read();
    if (req.method === "POST" && plainFirst) {
      let timer: NodeJS.Timeout | undefined;
      const windowOver = new Promise<typeof WINDOW_OVER>((resolve) => {
        timer = setTimeout(() => resolve(WINDOW_OVER), windowMs);
      });
      try {
        for (;;) {
          const read = await Promise.race([next as Promise<ReadResult>, windowOver]);
          if (read === WINDOW_OVER) break;
          if (read.done) {
            next = undefined;
            break;
          }
          next = reader.read();
          const chunk = read.value;
          if (isPriming(chunk)) {
            held.push(chunk);
            continue;
          }
          const data = messageData(chunk);
          if (data) {
            // The SDK enqueues a POST's last answer and closes its stream in one synchronous step: an already-settled read means "ended".
            const peek = await Promise.race([next, Promise.resolve(NOT_YET)]);
            if (peek !== NOT_YET && peek.done) {
              if (events) for (const sent of [...held, chunk]) discardEvent(events, sent);
              return sendJson(res, response, data);
            }
          }
          held.push(chunk);
          break;
        }
      } finally {
        clearTimeout(timer);
      }
    }
    if (res.destroyed) return cancel();
    copyHeaders(res, response.headers);
    res.writeHead(response.status);
    res.flushHeaders();
    for (const chunk of held) res.write(chunk);
    while (next) {
      const read = await next;
      if (read.done) break;
      if (res.destroyed) return cancel();
      if (!res.write(read.value)) await drained(res);
      next = reader.read();
    }
    res.end();
  } catch {
    cancel();
    res.destroy();
  } finally {
    res.off("close", cancel);
  }
}

/** Discards the event an SSE chunk carries (its `id:` line), if any. */
function discardEvent(events: NonNullable<Exchange["events"]>, chunk: Uint8Array): void {
  const text = Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, 400)).toString("latin1");
  const id = /(?:^|\n)id: ([^\n]{1,200})\n/.exec(text)?.[1];
  if (id !== undefined) events.discard(id);
}

function sendJson(res: ServerResponse, response: Response, data: Buffer): void {
  if (res.destroyed) return;
  const session = response.headers.get("mcp-session-id");
  if (session) res.setHeader("mcp-session-id", session);
  res.writeHead(200, { "content-type": "application/json", "content-length": data.length });
  res.end(data);
}

function sendMessage(res: ServerResponse, sessionId: string | undefined, message: JSONRPCMessage): void {
  if (res.destroyed) return;
  // A string, not a Buffer: Node writes the head and a string body as one chunk (one write, no copy into a Buffer first).
  const text = JSON.stringify(message);
  if (sessionId !== undefined) res.setHeader("mcp-session-id", sessionId);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function copyHeaders(res: ServerResponse, headers: Headers): void {
  headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
}

/** The SDK's priming event: an event id (and maybe a retry) with empty data, written before any message. */
function isPriming(chunk: Uint8Array): boolean {
  const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return text.length < 300 && text.subarray(0, 4).toString("latin1") === "id: " && text.toString("latin1").endsWith("\ndata: \n\n");
}

/** The JSON text of one whole SSE `message` event as the SDK writes it (`event: message`, an optional id, one data line), else undefined. */
function messageData(chunk: Uint8Array): Buffer | undefined {
  const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (text.length < EVENT_MESSAGE.length + DATA.length + 2 || !text.subarray(0, EVENT_MESSAGE.length).equals(EVENT_MESSAGE)) return undefined;
  if (text[text.length - 1] !== 0x0a || text[text.length - 2] !== 0x0a) return undefined;
  const at = text.indexOf(DATA, EVENT_MESSAGE.length - 1);
  if (at < 0) return undefined;
  const data = text.subarray(at + DATA.length, text.length - 2);
  // JSON.stringify never writes a raw newline: one line of data is the whole message.
  return data.includes(0x0a) ? undefined : data;
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.on("drain", done).on("close", done);
  });
}
