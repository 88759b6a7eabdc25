import { isSwitchedOff } from "@codemux/core";
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  isJSONRPCRequest,
  isJsonContentType,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
  type WebStandardStreamableHTTPServerTransportOptions,
} from "@modelcontextprotocol/server";
import { hasSdkStreams, type SdkStreams } from "./sdk-internals";

/** Whether a session's POSTs may be answered as JSON without the SDK's SSE stream: on unless `CODEMUX_JSON_ANSWERS=0` (or `false`, `off`). */
export function jsonAnswersOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return !isSwitchedOff(env.CODEMUX_JSON_ANSWERS);
}

/** What a POST taken past the SDK's stream comes back as: its one answer, or the SSE stream it had to open. */
export type PlainOutcome = { message: JSONRPCMessage } | { response: Response };

interface Pending {
  resolve(outcome: PlainOutcome): void;
  protocolVersion: string;
  timer: NodeJS.Timeout;
  /** Set once the SSE stream is being opened: the messages of this request then take the SDK's path, in order. */
  opening?: Promise<void>;
  /** The last of this request's messages sent on the stream (settled when it is). */
  tail?: Promise<void>;
}

const SSE_HEADERS = { "Content-Type": "text/event-stream", "Cache-Control": "no-cache, no-transform", Connection: "keep-alive", "X-Accel-Buffering": "no" };

/**
 * The SDK's Streamable HTTP transport, plus a path for the common POST: one request on a live
 * session, whose answer is handed back as the message itself (the bridge writes it as one JSON body)
 * instead of the SDK building a `ReadableStream`, a `Response`, a priming event and an SSE event that
 * the bridge then reads back. Everything the SDK would refuse, and every other request, takes the SDK's
 * own path. When a notification or a server request for that request comes before its answer, or the
 * answer is slower than the window, the request joins an SSE stream opened as the SDK opens one
 * (priming event, keep-alives, the event store), so progress, questions and resumption are unchanged.
 */
export class JsonAnswerTransport extends WebStandardStreamableHTTPServerTransport {
  readonly #pending = new Map<RequestId, Pending>();
  readonly #usable: boolean;
  #versions: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  #challenged = false;
  #isClosed = false;

  constructor(options: WebStandardStreamableHTTPServerTransportOptions) {
    super(options);
    // A stateful, unchecked-Host transport with the stream internals this SDK version has; anything else keeps the SDK's path.
    this.#usable = options.sessionIdGenerator !== undefined && !options.enableJsonResponse && !options.enableDnsRebindingProtection && hasSdkStreams(this);
  }

  override setSupportedProtocolVersions(versions: string[]): void {
    this.#versions = versions;
    super.setSupportedProtocolVersions(versions);
  }

  override setScopeChallengeResolver(resolver: Parameters<WebStandardStreamableHTTPServerTransport["setScopeChallengeResolver"]>[0]): void {
    this.#challenged = true;
    super.setScopeChallengeResolver(resolver);
  }

  /**
   * Takes a POST past the SDK's stream when it is one request the SDK would accept as it is (the
   * checks of its `handlePostRequest`, in its order of precedence, all passing); undefined means
   * "use `handleRequest`". `windowMs` bounds how long the answer may take before the SSE stream opens;
   * `oneRequest` says the body already passed the SDK's JSON-RPC request schema (it is not checked twice).
   */
  answerPlain(
    request: Request,
    body: unknown,
    { windowMs, oneRequest = false }: { windowMs: number; oneRequest?: boolean },
  ): Promise<PlainOutcome> | undefined {
    if (!this.#usable || this.#isClosed || this.#challenged || this.sessionId === undefined) return undefined;
    const headers = request.headers;
    const accept = headers.get("accept");
    if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
    if (!isJsonContentType(headers.get("content-type"))) return undefined;
    if (headers.get("mcp-session-id") !== this.sessionId) return undefined;
    const version = headers.get("mcp-protocol-version");
    if (version !== null && !this.#versions.includes(version)) return undefined;
    if (typeof body !== "object" || body === null || Array.isArray(body) || (body as { method?: unknown }).method === "initialize") return undefined;
    if (!oneRequest && !isJSONRPCRequest(body)) return undefined;
    const message = body as JSONRPCRequest;
    const id = message.id;
    if (this.#pending.has(id) || this.#sdk()._requestToStreamMapping.has(id)) return undefined;
    return new Promise<PlainOutcome>((resolve) => {
      const pending: Pending = {
        resolve,
        protocolVersion: version ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
        timer: setTimeout(() => void this.#openStream(id, pending), windowMs),
      };
      this.#pending.set(id, pending);
      try {
        this.onmessage?.(message, { request });
      } catch (error) {
        clearTimeout(pending.timer);
        this.#pending.delete(id);
        throw error;
      }
    });
  }

  override async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    if (this.#pending.size > 0) {
      const answer = isAnswer(message);
      const id = answer ? message.id : options?.relatedRequestId;
      const pending = id === undefined ? undefined : this.#pending.get(id);
      if (id !== undefined && pending) {
        if (answer && !pending.opening) {
          clearTimeout(pending.timer);
          this.#pending.delete(id);
          pending.resolve({ message });
          return;
        }
        // In order, once the stream is open: each message of this request waits for the one before it.
        const turn = (pending.tail ?? this.#openStream(id, pending)).then(() => super.send(message, options));
        pending.tail = turn.then(
          () => undefined,
          () => undefined,
        );
        if (answer) this.#pending.delete(id);
        return turn;
      }
    }
    return super.send(message, options);
  }

  override async close(): Promise<void> {
    this.#isClosed = true;
    // Open, then end, the streams of requests still waiting: their clients see the SDK's empty stream, as on its own path.
    await Promise.all([...this.#pending].map(([id, pending]) => this.#openStream(id, pending)));
    this.#pending.clear();
    return super.close();
  }

  /** Opens the SSE stream the SDK would have opened for this request and hands it to the waiting bridge; idempotent. */
  #openStream(id: RequestId, pending: Pending): Promise<void> {
    if (pending.opening) return pending.opening;
    clearTimeout(pending.timer);
    pending.opening = (async () => {
      const sdk = this.#sdk();
      const streamId = crypto.randomUUID();
      const encoder = new TextEncoder();
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      let keepAlive: ReturnType<typeof setInterval> | undefined;
      // The client left or the stream ended: nothing more of this request is kept here (the SDK keeps the rest).
      const forget = () => {
        if (this.#pending.get(id) === pending) this.#pending.delete(id);
      };
      const readable = new ReadableStream<Uint8Array>({
        start: (c) => {
          controller = c;
        },
        cancel: () => {
          if (keepAlive !== undefined) clearInterval(keepAlive);
          if (sdk._streamMapping.get(streamId)?.controller === controller) sdk._streamMapping.delete(streamId);
          forget();
        },
      });
      sdk._streamMapping.set(streamId, {
        controller,
        encoder,
        cleanup: () => {
          if (keepAlive !== undefined) clearInterval(keepAlive);
          sdk._streamMapping.delete(streamId);
          forget();
          try {
            controller.close();
          } catch {
            // Already closed.
          }
        },
      });
      sdk._requestToStreamMapping.set(id, streamId);
      await sdk.writePrimingEvent(controller, encoder, streamId, pending.protocolVersion);
      if (sdk._streamMapping.get(streamId)?.controller === controller) keepAlive = sdk.startKeepAlive(controller, encoder);
      const headers: Record<string, string> = { ...SSE_HEADERS };
      if (this.sessionId !== undefined) headers["mcp-session-id"] = this.sessionId;
      pending.resolve({ response: new Response(readable, { status: 200, headers }) });
      if (this.#isClosed) sdk._streamMapping.get(streamId)?.cleanup();
    })();
    return pending.opening;
  }

  #sdk(): SdkStreams {
    return this as unknown as SdkStreams;
  }
}

/**
 * Whether an outgoing message is an answer (a result or an error for an id): told by its keys, not by the SDK's
 * schemas, since what is sent here was built by the SDK's server or the server lane, never taken from a client.
 */
function isAnswer(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  const m = message as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
  return m.method === undefined && (typeof m.id === "string" || typeof m.id === "number") && (m.result !== undefined || m.error !== undefined);
}
