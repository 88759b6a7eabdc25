import { LineSplitter, jsonRpcMessage } from "@codemux/core";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/core";
import { ProtocolErrorCode, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/server";

export interface StdioServerTransportOptions {
  /** A longer request is refused with an error and skipped; the session goes on. */
  maxMessageBytes?: number;
  /** After stdin ends, how long requests still in flight may take to be answered before the session closes. */
  drainTimeoutMs?: number;
}

/**
 * The stdio transport codemux serves on. Unlike the SDK's, it answers what it cannot use
 * (invalid JSON with -32700, a message that is not JSON-RPC with -32600, an oversized request
 * with -32600) instead of dropping it silently or closing the session.
 */
export class StdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #lines: LineSplitter;
  readonly #maxBytes: number;
  readonly #drainTimeoutMs: number;
  /** Requests received and not answered yet: when stdin ends, they are answered before the session closes. */
  readonly #pending = new Set<string | number>();
  #inputEnded = false;
  #drained: Promise<void> | undefined;
  #drainTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    readonly stdin: NodeJS.ReadableStream = process.stdin,
    readonly stdout: NodeJS.WritableStream = process.stdout,
    options: StdioServerTransportOptions = {},
  ) {
    this.#maxBytes = options.maxMessageBytes ?? 32 * 1024 * 1024;
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
    this.#lines = new LineSplitter({
      maxLineBytes: this.#maxBytes,
      onLine: (line) => this.#line(line),
      onOversize: (bytes) =>
        this.#reject(null, ProtocolErrorCode.InvalidRequest, `Request too large: more than ${bytes} bytes (the limit is ${this.#maxBytes}).`),
    });
  }

  readonly #onData = (chunk: Buffer | string) => this.#lines.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  readonly #onEnd = () => {
    this.#inputEnded = true;
    if (this.#pending.size === 0) {
      void this.close();
      return;
    }
    this.#drainTimer = setTimeout(() => void this.close(), this.#drainTimeoutMs);
    this.#drainTimer.unref();
  };
  readonly #onError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    this.stdin.on("data", this.#onData);
    this.stdin.on("end", this.#onEnd);
    this.stdin.on("error", this.#onError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.stdout.write(`${JSON.stringify(message)}\n`)) {
      // One listener however many answers wait behind a slow reader.
      this.#drained ??= new Promise<void>((resolve) =>
        this.stdout.once("drain", () => {
          this.#drained = undefined;
          resolve();
        }),
      );
      await this.#drained;
    }
    const id = "method" in message ? undefined : (message as { id?: unknown }).id;
    if (typeof id === "string" || typeof id === "number") {
      this.#pending.delete(id);
      if (this.#inputEnded && this.#pending.size === 0) void this.close();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#drainTimer);
    this.stdin.off("data", this.#onData);
    this.stdin.off("end", this.#onEnd);
    this.stdin.off("error", this.#onError);
    this.#lines.clear();
    this.onclose?.();
  }

  #line(line: string): void {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.#reject(null, ProtocolErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
      return;
    }
    const message = jsonRpcMessage(value, JSONRPCMessageSchema);
    if (message) {
      if ("method" in message && "id" in message) this.#pending.add(message.id as string | number);
      this.onmessage?.(message);
      return;
    }
    const id = (value as { id?: unknown } | null)?.id;
    // Only a request (it has an id) gets an answer; a broken notification is dropped, as JSON-RPC says.
    if (typeof value === "object" && value !== null && "method" in value && id === undefined) return;
    this.#reject(
      typeof id === "string" || typeof id === "number" ? id : null,
      ProtocolErrorCode.InvalidRequest,
      "Invalid Request: not a JSON-RPC 2.0 message.",
    );
  }

  #reject(id: string | number | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}
