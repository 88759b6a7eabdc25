import { atTurnEnd } from "@codemux/core";
import { parseJSONRPCMessage, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/server";
import type { ServerResponse } from "node:http";
import { sendRpcError } from "./respond";

/**
 * The 2024-11-05 HTTP+SSE server transport for clients that still speak it: the GET stream opens with an
 * `endpoint` event naming where the client posts its messages (with its session id), and every message
 * to the client is a `message` event on that stream. SDK v2 carries it only in a deprecated, frozen
 * package; this is the whole of it, with the session id codemux gives (the instance's prefix first).
 */
export class SseServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  readonly sessionId: string;
  readonly #endpoint: string;
  readonly #stream: ServerResponse;
  #state: "new" | "open" | "closed" = "new";

  /** `endpoint`: where posts go (`/messages`, with a query of its own if need be); `stream`: the GET /sse response. */
  constructor({ endpoint, stream, sessionId }: { endpoint: string; stream: ServerResponse; sessionId: string }) {
    this.#endpoint = endpoint;
    this.#stream = stream;
    this.sessionId = sessionId;
  }

  async start(): Promise<void> {
    if (this.#state !== "new") throw new Error("This SSE transport was started already.");
    this.#state = "open";
    this.#stream.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive" });
    const url = new URL(this.#endpoint, "http://localhost");
    url.searchParams.set("sessionId", this.sessionId);
    this.#stream.write(`event: endpoint\ndata: ${url.pathname}${url.search}\n\n`);
    this.#stream.once("close", () => this.#end());
  }

  /** One message the client posted (its body read and parsed as JSON within the server's limits): 202 once handed on (at the end of the turn), 400 when it is no JSON-RPC message. */
  post(body: unknown, res: ServerResponse): void {
    if (this.#state !== "open") {
      sendRpcError(res, 404, { code: -32001, message: "Session not found: its stream is closed. Open a new stream with GET /sse." });
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(body);
    } catch (error) {
      this.onerror?.(error as Error);
      sendRpcError(res, 400, { code: -32600, message: "The body is not a JSON-RPC message (a request, notification or response)." });
      return;
    }
    this.onmessage?.(message);
    // The 202 leaves at the end of this turn, after the downstream write the message started: written first,
    // it woke the client while the call had yet to reach its server (one client: p50 about 50 µs lower,
    // docs/perf/peers.md). Not a later turn: that cost 10-25 µs of CPU a call at 50 clients.
    atTurnEnd(() => res.writeHead(202).end("Accepted"), "client");
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#state !== "open") throw new Error("The SSE stream is closed.");
    this.#stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    if (!this.#stream.writableEnded) this.#stream.end();
    this.#end();
  }

  #end(): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.onclose?.();
  }
}
