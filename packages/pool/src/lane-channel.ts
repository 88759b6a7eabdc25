import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type Implementation,
  type JSONRPCMessage,
  type Progress,
  type ServerCapabilities,
  type Tool,
  type Transport,
} from "@modelcontextprotocol/client";
import type { ToolResult } from "@codemux/core";
import type { ChannelCall, ChannelRequest, DownstreamChannel } from "./channel";
import { HEADER_MISMATCH, type ChannelClient, type ModernCall, type SdkChannel } from "./sdk-channel";

/** The lane's request ids and progress tokens: strings, so they never meet the SDK client's numeric ids. */
const ID_PREFIX = "codemux-";
const PROGRESS_KEYS = new Set(["progressToken", "progress", "total", "message"]);
/** Where a 2026 server names itself in a result's `_meta` (the SDK v2 server stamps every answer with it). */
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";

type Message = JSONRPCMessage & {
  id?: unknown;
  method?: unknown;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

class PendingCall {
  /** When the call times out (`performance.now()` time); progress moves it. */
  deadline = 0;
  /** The calls of its signal, when it has one. */
  watch: SignalWatch | undefined;
  /** The transport's promise for writing the request. */
  sent: Promise<void> | undefined;
  /** On a 2026 connection: the request's params as the SDK channel made them (before the envelope), and the input round they carry. */
  modern: ModernCall | undefined;
  resolve: (result: ToolResult | Promise<ToolResult>) => void = noop;
  reject: (error: unknown) => void = noop;
  constructor(
    readonly id: string,
    readonly request: ChannelCall,
  ) {}
}

interface SignalWatch {
  readonly signal: AbortSignal;
  readonly calls: Set<PendingCall>;
  readonly onAbort: () => void;
}

const noop = () => undefined;
/** setTimeout's largest delay: a longer one would fire at once. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * The stdio call lane: `tools/call` on a connected SDK client without the SDK's per-call cost. The request
 * is sent and its answer matched here, by wrapping the transport's `onmessage` (answers to lane ids and
 * progress for lane tokens stop here; every other message goes on to the SDK client, which keeps
 * initialize, tools/list, server requests and notifications); everything but `tools/call` is the SDK
 * channel's, which it wraps. The SDK's semantics are kept: the timeout is an SdkError
 * RequestTimeout, progress resets it and reaches `onprogress`, an abort sends `notifications/cancelled`
 * (only while the call is pending) and rejects, a close rejects with ConnectionClosed, a JSON-RPC error
 * becomes the same ProtocolError, and a result is checked by the client's own era codec (the codec itself
 * for anything but plain text content). Calls sharing a signal share one listener on it, gone once the last settles.
 *
 * On a 2026-era connection the request carries what the SDK client writes: the SDK channel's params (the caller's
 * capabilities, the tasks extension, the input round) under the client's own `_meta` envelope (protocol version,
 * client info, capabilities), as does a cancellation; an answer other than a plain complete one (a task, `input_required`,
 * a missing `resultType`, anything the codec must see) is settled by the SDK channel as it settles its own, and a tool
 * that marks `x-mcp-header` parameters, or a `HeaderMismatch` answer, takes the SDK channel's path.
 */
export class LaneChannel implements DownstreamChannel {
  readonly #pending = new Map<string, PendingCall>();
  /** The channel that carries everything but `tools/call`. */
  readonly #sdk: SdkChannel;
  readonly #transport: Transport;
  #next = 0;
  #closed = false;
  /** One timer for every call, armed for the earliest deadline: no timer to set and clear per call. */
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Number.POSITIVE_INFINITY;
  /** The calls waiting on each caller's signal. */
  readonly #watches = new Map<AbortSignal, SignalWatch>();
  /** The last send's promise, so that calls sharing it share one rejection handler. */
  #lastSent: Promise<void> | undefined;
  /** The connection speaks the 2026-07-28 era (picked at connect, fixed for its life). */
  readonly #modern: boolean;
  /** The SDK client's `_meta` envelope of that era, under every message the lane sends (none on a 2025 connection). */
  readonly #envelope: Readonly<Record<string, unknown>> | undefined;

  /** Make it once `sdk` is connected to `transport`: the lane wraps the handlers the SDK installed. */
  constructor(sdk: SdkChannel, transport: Transport) {
    this.#sdk = sdk;
    this.#transport = transport;
    this.#modern = sdk.client?.getProtocolEra() === "modern";
    this.#envelope = this.#modern ? sdk.client.envelope() : undefined;
    const toSdk = transport.onmessage;
    const sdkClose = transport.onclose;
    transport.onmessage = (message, extra) => {
      if (!this.#take(message as Message)) toSdk?.(message, extra);
    };
    transport.onclose = () => {
      // The SDK first (its onclose marks the server down), then the lane's calls, in the SDK's own order.
      try {
        sdkClose?.();
      } finally {
        this.#close();
      }
    };
  }

  get client(): ChannelClient {
    return this.#sdk.client;
  }

  get serverInfo(): Implementation | undefined {
    return this.#sdk.serverInfo;
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.#sdk.capabilities;
  }

  get protocolVersion(): string | undefined {
    return this.#sdk.protocolVersion;
  }

  get listTtlMs(): number | undefined {
    return this.#sdk.listTtlMs;
  }

  get toolProblems(): string[] {
    return this.#sdk.toolProblems;
  }

  listTools(timeoutMs: number): Promise<Tool[]> {
    return this.#sdk.listTools(timeoutMs);
  }

  request(call: ChannelRequest): Promise<Record<string, unknown>> {
    return this.#sdk.request(call);
  }

  close(): Promise<void> {
    return this.#sdk.close();
  }

  /** How many calls wait for an answer. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Whether the connection speaks the 2026-07-28 era, whose requests carry the SDK's `_meta` envelope. */
  get modern(): boolean {
    return this.#modern;
  }

  callTool(request: ChannelCall): Promise<ToolResult> {
    if (this.#modern && this.#sdk.marksHeaders(request.name)) return this.#sdk.callTool(request);
    return new Promise<ToolResult>((resolve, reject) => {
      if (this.#closed) return reject(new Error("Not connected"));
      const signal = request.signal;
      if (signal?.aborted) return reject(asSdkError(signal.reason));
      const id = `${ID_PREFIX}${++this.#next}`;
      const call = new PendingCall(id, request);
      call.resolve = resolve;
      call.reject = reject;
      this.#pending.set(id, call);
      // A waiting call keeps the process alive through its timeout, as the SDK's timer of its own does.
      if (this.#pending.size === 1) this.#timer?.ref();
      call.deadline = performance.now() + request.timeoutMs;
      this.#arm(call.deadline);
      if (signal) this.#watch(signal, call);
      // A progress token always: progress then resets the timeout, even when our caller does not listen.
      const sent = this.#transport.send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: this.#modern
          ? this.#modernParams(call)
          : {
              name: request.name,
              arguments: request.arguments,
              _meta: request.traceMeta ? { ...request.traceMeta, progressToken: id } : { progressToken: id },
            },
      });
      call.sent = sent;
      // A transport that writes a tick's messages together answers them with one promise: one handler for all.
      if (sent !== this.#lastSent) {
        this.#lastSent = sent;
        sent.catch((error: unknown) => this.#sendFailed(sent, error));
      }
    });
  }

  /** A 2026 call's params: the SDK channel's, with the progress token, under the SDK client's envelope (the call's own keys win, as in the SDK). */
  #modernParams(call: PendingCall): Record<string, unknown> {
    const modern = this.#sdk.modernCall(call.request);
    call.modern = modern;
    const { params } = modern;
    return { ...params, _meta: { ...this.#envelope, ...params._meta, progressToken: call.id } };
  }

  /** The request of every call still waiting on this write was not sent: each fails with the write's error. */
  #sendFailed(sent: Promise<void>, error: unknown): void {
    for (const call of [...this.#pending.values()]) {
      if (call.sent !== sent) continue;
      this.#finish(call);
      call.reject(error);
    }
  }

  /** True when the message belongs to the lane (handled or dropped here); false sends it on to the SDK. */
  #take(message: Message): boolean {
    if (message.method === undefined) {
      const id = message.id;
      if (typeof id !== "string" || !id.startsWith(ID_PREFIX)) return false;
      const call = this.#pending.get(id);
      // An answer to a call that already timed out or was cancelled: the SDK drops those too.
      if (call) this.#answer(call, message);
      return true;
    }
    if (message.method !== "notifications/progress") return false;
    const token = message.params?.progressToken;
    if (typeof token !== "string" || !token.startsWith(ID_PREFIX)) return false;
    const call = this.#pending.get(token);
    if (call) this.#progress(call, message);
    return true;
  }

  #answer(call: PendingCall, message: Message): void {
    this.#finish(call);
    if (message.error !== undefined) {
      const error = ProtocolError.fromError(message.error.code, message.error.message, message.error.data);
      if (this.#modern && error.code === HEADER_MISMATCH) call.resolve(this.#sdk.retryHeaderMismatch(call.request));
      else call.reject(error);
      return;
    }
    const result = message.result;
    if (this.#modern) {
      if (isPlainModernCallToolResult(result)) {
        const { resultType: _, ...complete } = result as Record<string, unknown>;
        call.resolve(complete as ToolResult);
        return;
      }
      const settled = this.#sdk.settleModern(call.request, call.modern as ModernCall, result);
      if (settled instanceof SdkError) call.reject(settled);
      else call.resolve(settled);
      return;
    }
    if (isPlainCallToolResult(result)) {
      call.resolve(result);
      return;
    }
    // Without `modern`, the check settles at once: an SdkError or the result.
    const checked = this.#sdk.client.checkCallToolResult(result) as ToolResult | SdkError;
    if (checked instanceof SdkError) call.reject(checked);
    else call.resolve(checked);
  }

  #progress(call: PendingCall, message: Message): void {
    const params = message.params as Record<string, unknown>;
    let progress: Progress | undefined;
    if (isPlainProgress(params)) {
      const { progressToken: _, ...rest } = params;
      progress = rest as Progress;
    } else {
      progress = this.#sdk.client.checkProgress(message);
      // The SDK drops a malformed progress notification: it neither reaches onprogress nor resets the timeout.
      if (progress === undefined) return;
    }
    call.deadline = performance.now() + call.request.timeoutMs;
    try {
      call.request.onprogress?.(progress);
    } catch {
      // As in the SDK, a failing progress handler does not fail the call.
    }
  }

  /** Makes sure the timer fires by `deadline`; a timer already due earlier stays (its sweep re-arms). */
  #arm(deadline: number): void {
    if (deadline >= this.#armedFor) return;
    clearTimeout(this.#timer);
    this.#armedFor = deadline;
    this.#timer = setTimeout(this.#sweep, Math.min(MAX_DELAY_MS, Math.max(0, deadline - performance.now())));
    if (this.#pending.size === 0) this.#timer.unref();
  }

  /** Times out every call past its deadline, then re-arms for the earliest one left. */
  readonly #sweep = (): void => {
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    const expired: PendingCall[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const call of this.#pending.values()) {
      if (call.deadline <= now) expired.push(call);
      else if (call.deadline < next) next = call.deadline;
    }
    for (const call of expired) this.#cancel(call, new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout: call.request.timeoutMs }));
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
  };

  /**
   * One abort listener per signal, however many calls wait on it: calls that share a signal (a snippet
   * run's) cost a set entry each, not a listener, whose add and remove on an AbortSignal cost
   * microseconds and grow with the listeners already there.
   */
  #watch(signal: AbortSignal, call: PendingCall): void {
    let watch = this.#watches.get(signal);
    if (watch === undefined) {
      const calls = new Set<PendingCall>();
      const onAbort = () => {
        for (const waiting of [...calls]) this.#cancel(waiting, signal.reason);
      };
      watch = { signal, calls, onAbort };
      this.#watches.set(signal, watch);
      signal.addEventListener("abort", onAbort);
    }
    watch.calls.add(call);
    call.watch = watch;
  }

  /** Ends a pending call: tells the server (as the SDK does) and rejects. A settled call is left alone. */
  #cancel(call: PendingCall, reason: unknown): void {
    if (this.#pending.get(call.id) !== call) return;
    this.#finish(call);
    const params: Record<string, unknown> = { requestId: call.id, reason: String(reason) };
    // A 2026 server reads the envelope on every message, as the SDK client sends it.
    if (this.#envelope) params._meta = { ...this.#envelope };
    this.#transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params }).catch(() => undefined);
    call.reject(asSdkError(reason));
  }

  #finish(call: PendingCall): void {
    this.#pending.delete(call.id);
    // With no call waiting, the timer must not keep the process up.
    if (this.#pending.size === 0) this.#timer?.unref();
    const watch = call.watch;
    if (watch !== undefined) {
      watch.calls.delete(call);
      // The listener (not `once`) goes with the signal's last call, on every way out, the abort included.
      if (watch.calls.size === 0) {
        watch.signal.removeEventListener("abort", watch.onAbort);
        this.#watches.delete(watch.signal);
      }
    }
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    const error = new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed");
    for (const call of [...this.#pending.values()]) {
      this.#finish(call);
      call.reject(error);
    }
  }
}

/** What the SDK rejects an aborted request with: the reason when it is an SdkError, else a RequestTimeout naming it. */
function asSdkError(reason: unknown): SdkError {
  return reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
}

function isPlainProgress(params: Record<string, unknown>): boolean {
  if (typeof params.progress !== "number") return false;
  if (params.total !== undefined && typeof params.total !== "number") return false;
  if (params.message !== undefined && typeof params.message !== "string") return false;
  for (const key in params) if (!PROGRESS_KEYS.has(key)) return false;
  return true;
}

/**
 * What the client's 2025 codec accepts and returns unchanged, checked without zod: `content` an array of
 * plain text blocks, `isError` a boolean, `structuredContent` an object, nothing else. Anything else
 * (images, annotations, `_meta`, unknown keys, a missing `content`) goes through the codec.
 */
export function isPlainCallToolResult(value: unknown): value is ToolResult {
  if (!isRecord(value)) return false;
  let content = false;
  for (const key in value) {
    if (key === "content") {
      const blocks = value.content;
      if (!Array.isArray(blocks)) return false;
      for (const block of blocks) if (!isPlainTextBlock(block)) return false;
      content = true;
    } else if (key === "isError") {
      if (typeof value.isError !== "boolean") return false;
    } else if (key === "structuredContent") {
      if (!isRecord(value.structuredContent)) return false;
    } else {
      return false;
    }
  }
  return content;
}

/**
 * What the client's 2026 codec takes as a complete answer and returns unchanged but for `resultType`, checked without zod:
 * `resultType: "complete"`, plain text content, `isError` a boolean, `structuredContent` an object, and at most the
 * server's name and version in `_meta` (as an SDK v2 server stamps every answer). Anything else goes through the codec.
 */
export function isPlainModernCallToolResult(value: unknown): boolean {
  if (!isRecord(value) || value.resultType !== "complete") return false;
  let content = false;
  for (const key in value) {
    if (key === "content") {
      const blocks = value.content;
      if (!Array.isArray(blocks)) return false;
      for (const block of blocks) if (!isPlainTextBlock(block)) return false;
      content = true;
    } else if (key === "isError") {
      if (typeof value.isError !== "boolean") return false;
    } else if (key === "structuredContent") {
      if (!isRecord(value.structuredContent)) return false;
    } else if (key === "_meta") {
      if (!isPlainServerInfoMeta(value._meta)) return false;
    } else if (key !== "resultType") {
      return false;
    }
  }
  return content;
}

function isPlainServerInfoMeta(meta: unknown): boolean {
  if (!isRecord(meta)) return false;
  for (const key in meta) if (key !== SERVER_INFO_KEY) return false;
  const info = meta[SERVER_INFO_KEY];
  if (!isRecord(info) || typeof info.name !== "string" || typeof info.version !== "string") return false;
  for (const key in info) if (key !== "name" && key !== "version") return false;
  return true;
}

function isPlainTextBlock(block: unknown): boolean {
  if (!isRecord(block) || block.type !== "text" || typeof block.text !== "string") return false;
  for (const key in block) if (key !== "type" && key !== "text") return false;
  return true;
}
