import type { ClientCapabilities, DownstreamTaskHandling, InputRound, ToolResult } from "@codemux/core";
import type { Progress, Tool, Transport } from "@modelcontextprotocol/client";
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { AuthRequiredError } from "./auth/auth-required";
import { watchLogin } from "./auth/login-watch";
import { abortableSleep, backoffDelay, type BackoffOptions } from "./backoff";
import { callError } from "./call-errors";
import {
  callLaneEnabled,
  type CallerSession,
  type ChannelCall,
  type DownstreamChannel,
  type DownstreamClient,
  type DownstreamNotification,
  type DownstreamRequest,
} from "./channel";
import type { ServerSpec } from "./config/types";
import {
  DEFAULT_BACKOFF,
  DEFAULT_IDLE_STOP_MS,
  DEFAULT_LIST_CHANGED_DEBOUNCE_MS,
  DEFAULT_PROBE_TIMEOUT_MS,
  DEFAULT_REFRESH_INTERVAL_MS,
  DEFAULT_RETRY_DELAYS_MS,
  LEGACY_VERDICT_MAX_AGE_MS,
  MIN_LIST_TTL_MS,
  STABLE_AFTER_MS,
} from "./defaults";
import { CallCancelledError, PoolError, ServerUnavailableError, ToolNotFoundError } from "./errors";
import { httpStatusOf } from "./http-errors";
import { LaneChannel } from "./lane-channel";
import { openListen } from "./listen";
import { SdkChannel } from "./sdk-channel";
import { maskUrl, redactSecrets, redactingLogger, silentLogger, type Logger } from "@codemux/core";
import { trace, type Attributes } from "@opentelemetry/api";
import { selfSpawnReason } from "./self";
import { StderrRing } from "./stderr-ring";
import { createToolFilter, toolFilterReason } from "./tool-filter";
import { asPrior, correctedVerdict, diedOnProbe, type RememberedEra, versionChanged, VersionChanged, withVersion } from "./era-verdict";
import { relayable, retryable } from "./call-policy";
import { describeFailure, exitOf, exitReason, type Failure } from "./failure-text";
import { inSpan, SpanKind, traceCarrier, tracing } from "./tracing";
import { createTransport, describeTransport, type TransportFactory } from "./transports";

/**
 * `skipped`: never started, because starting it would be unsafe (it is codemux itself); `error` says why.
 * `idle`: a lazy server not started yet, or stopped after being unused; the next call starts it.
 */
export type ServerState = "connecting" | "ready" | "reconnecting" | "failed" | "skipped" | "closed" | "idle";

export interface ServerStatus {
  name: string;
  /** A short name for this connection, `c1`, `c2`... in the order the servers were added; kept while the pool runs. */
  alias: string;
  /** 8 hex digits of a hash of the server's resolved entry: it changes when the entry does (a reloaded config). */
  id: string;
  state: ServerState;
  transport: "stdio" | "http" | "sse";
  /** The command line or URL, with secrets masked; env and header values never appear. */
  endpoint: string;
  toolCount: number;
  /** Why the server failed or dropped: set in `failed`, `reconnecting` and `skipped` (secrets masked). */
  error?: string;
  /** The state in words where it is no failure: `starting (3 s)` while connecting, what `idle` and `closed` mean. */
  detail?: string;
  /** What the config parser noticed about this entry (unknown keys, with a did-you-mean), and what its last tool list broke (a bad field dropped). */
  warnings?: string[];
  /** The last lines the server wrote to stderr (stdio only; secrets masked). */
  stderrTail: string[];
  /** How many times the connection was re-established after the first. */
  restarts: number;
  serverInfo?: { name: string; version: string };
  /** The protocol version the live connection speaks: `2025-11-25` (and earlier) for the 2025 era, `2026-07-28` for the 2026 one. */
  protocol?: string;
  /** The server's era as last found (probed, or remembered), dated: what a restart passes back instead of probing again. */
  era?: RememberedEra;
  /** What the server said about its tools when it connected (its `instructions`), as it said it. */
  instructions?: string;
  /** When the tool list was last fetched (ISO 8601). */
  lastRefreshAt?: string;
  /** Set for an isolated server: one instance per `principal` or `session`; its status is its listing connection's. */
  isolation?: "principal" | "session";
  /** How many instances of an isolated server run now. */
  instances?: number;
  /** Set for a server whose instances act as their principal: its resources and prompts are each principal's own, never the listing connection's. */
  credentials?: "per-principal";
}

export type { RememberedEra } from "./era-verdict";

/** Hints from the tool's annotations that make a retry after the request was sent safe. */
export interface RetryHints {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
}

export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
  /** Overrides the server's `callTimeoutMs`. */
  timeoutMs?: number;
  /** The tool's annotations: with `readOnlyHint` or `idempotentHint` a call is retried on any transient failure. */
  annotations?: RetryHints;
  /** The client session making the call: an isolated server (`isolation`) serves it on that session's or principal's own instance. */
  session?: CallerSession;
  /** The calling client's capabilities: a 2026-era server gets those codemux can relay, in the request's `_meta`. */
  clientCapabilities?: ClientCapabilities;
  /** Set when the caller answers a 2026 server's `input_required` itself (see `ChannelCall.inputRequired`): the round to send, `{}` for the first. */
  inputRequired?: InputRound;
  /** How a 2026 server's task answering the call is treated (see `ChannelCall.downstreamTask`); followed inside the call when absent. */
  downstreamTask?: DownstreamTaskHandling | undefined;
  /** The W3C trace context the request carries in its `_meta` (set by the call's own span). */
  traceMeta?: Record<string, string> | undefined;
}

/** What the relay is told with a server's request besides the request: its signal, whose instance sent it, and for whose request. */
export interface RelayContext {
  signal: AbortSignal;
  /** Set when an isolated server's instance sent the request. */
  owner?: InstanceOwner | undefined;
  /**
   * Set when the server said which request it asks about: it came on the stream of a request made for
   * this caller (the `CallOptions.session` given with it), or during a 2026 server's task of that caller's call.
   */
  caller?: CallerSession | undefined;
}

/** Whose instance of an isolated server a connection is: a principal's, or (with `session`) one client session's. */
export interface InstanceOwner {
  principal: string;
  session?: string;
}

/**
 * Requests a downstream server sends to its client (sampling, elicitation, roots), relayed by codemux
 * to the right client session. Only the capabilities given here are declared to the servers.
 */
export interface ServerRequestRelay {
  capabilities: ClientCapabilities;
  /** Answers one request of `server` (of `owner`'s instance when it is isolated); rejects (an error with a JSON-RPC code) when no client session can answer it. */
  handle(server: string, request: { method: string; params?: Record<string, unknown> }, context: RelayContext): Promise<Record<string, unknown>>;
}

export interface ConnectionOptions {
  createTransport?: TransportFactory;
  /** Relays sampling, elicitation and roots requests from the servers; without it they declare none of these. */
  relay?: ServerRequestRelay;
  logger?: Logger;
  clientInfo?: { name: string; version: string };
  backoff?: BackoffOptions;
  /** Quiet period before a `tools/list_changed` triggers a refresh. */
  listChangedDebounceMs?: number;
  /** Default re-list interval for servers that do not send `tools/list_changed` (0 = off; a server's `refreshIntervalMs` wins). */
  refreshIntervalMs?: number;
  /** Delays before each retry of a transiently failed call; its length is the number of retries. `[]` turns retries off. */
  retryDelaysMs?: readonly number[];
  /** Every server is lazy (`--lazy`): not started until a call needs it. A server's own `"lazy": true` makes just that one lazy. */
  lazy?: boolean;
  /** Whether a lazy server may wait for its first call: only when its tools are known without it (from the cached catalog). Always, when absent. */
  deferStart?: (server: string) => boolean;
  /** A lazy server unused this long is stopped (0 = never); a server's `idleStopMs` wins. */
  idleStopMs?: number;
  /** The environment codemux runs in (proxy variables, what stdio servers inherit, the nesting marker, `CODEMUX_CALL_LANE`); `process.env` by default. */
  env?: NodeJS.ProcessEnv;
  /**
   * Whether stdio servers' `tools/call` takes the call lane rather than the SDK client's request path (same
   * answers, less CPU a call). When absent, on unless `CODEMUX_CALL_LANE` is `0`, `false` or `off`.
   */
  callLane?: boolean;
  /** Set on an isolated server's instance: whose it is, passed to the relay with each of its requests. */
  owner?: InstanceOwner;
  /** A server's era as remembered from an earlier run (the catalog cache): connecting with it skips the probe. */
  priorEra?: (server: string) => RememberedEra | undefined;
  /** How long the era probe waits for a stdio server's answer before taking it for a 2025 one (2 s by default). */
  probeTimeoutMs?: number;
  /** The floor under a 2026 server's `tools/list` ttlMs when it sets the re-listing interval (5 s by default). */
  minListTtlMs?: number;
}

interface ConnectionEvents {
  state: [ServerStatus];
  tools: [Tool[]];
  notification: [DownstreamNotification];
}

/** One downstream server: its connection, state, tools, restarts and calls. */
export class ServerConnection extends EventEmitter<ConnectionEvents> {
  readonly stderr = new StderrRing();
  #state: ServerState = "connecting";
  #stateSince = Date.now();
  #error: string | undefined;
  #transientFailure = false;
  /** The last failure is one only a login fixes. */
  #needsLoginFailure = false;
  /** How the ready connection reaches the server: the SDK client, or on stdio the call lane in front of it. */
  #channel: DownstreamChannel | undefined;
  /** The channel of a connection attempt still under way, closed by close(). */
  #pending: SdkChannel | undefined;
  /** That attempt's transport: during the era probe the SDK client does not own it yet, so close() closes it itself. */
  #pendingTransport: Transport | undefined;
  #transport: unknown;
  #tools: Tool[] = [];
  #attempt: Promise<void> | undefined;
  #started = false;
  #retryTimer: NodeJS.Timeout | undefined;
  #refreshTimer: NodeJS.Timeout | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #sawListChanged = false;
  #lastRefreshAt: number | undefined;
  #failures = 0;
  #restarts = 0;
  #everReady = false;
  #readySince = 0;
  /** Calls in flight, and the timer that stops a lazy server once none has come for `idleStopMs`. */
  #inFlight = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  /** Stops watching the login file (set while the server waits for a login). */
  #stopLoginWatch: (() => void) | undefined;
  /** The era verdict passed back on the next connect; looked up in `priorEra` once, then kept from each connect. */
  #era: RememberedEra | undefined;
  #eraLooked = false;
  readonly #allowed: (tool: string) => boolean;
  readonly #logger: Logger;

  /** See `ServerStatus.id`. */
  readonly id: string;

  constructor(
    readonly spec: ServerSpec,
    readonly options: ConnectionOptions = {},
    readonly alias = "c1",
  ) {
    super();
    this.id = createHash("sha256")
      .update(JSON.stringify([spec.name, spec.transport, spec.tools]))
      .digest("hex")
      .slice(0, 8);
    this.setMaxListeners(0);
    this.#allowed = createToolFilter(spec.tools);
    this.#logger = redactingLogger(options.logger ?? silentLogger);
  }

  get name(): string {
    return this.spec.name;
  }

  get state(): ServerState {
    return this.#state;
  }

  /** The server's tools after its allow/deny filter. */
  get tools(): Tool[] {
    return this.#tools;
  }

  status(): ServerStatus {
    const info = this.#channel?.serverInfo;
    const instructions = this.#channel?.client.getInstructions();
    const detail = this.#detail();
    const error = this.#state === "ready" || detail !== undefined ? undefined : this.#reason();
    const warnings = [...(this.spec.warnings ?? []), ...(this.#channel?.toolProblems ?? [])];
    return {
      name: this.name,
      alias: this.alias,
      id: this.id,
      state: this.#state,
      transport: this.spec.transport.type,
      endpoint: describeTransport(this.spec.transport),
      toolCount: this.#tools.length,
      ...(error ? { error: redactSecrets(error) } : {}),
      ...(detail ? { detail } : {}),
      ...(warnings.length ? { warnings } : {}),
      stderrTail: this.stderr.tail(10).map(redactSecrets),
      restarts: this.#restarts,
      ...(info ? { serverInfo: { name: info.name, version: info.version } } : {}),
      ...(this.#channel?.protocolVersion ? { protocol: this.#channel.protocolVersion } : {}),
      ...(this.#era ? { era: this.#era } : {}),
      ...(instructions ? { instructions } : {}),
      ...(this.#lastRefreshAt ? { lastRefreshAt: new Date(this.#lastRefreshAt).toISOString() } : {}),
    };
  }

  /** Counts restarts from `count`: a restart asked for (`ServerPool.restart`) replaces the connection and keeps its count. */
  carryRestarts(count: number): void {
    this.#restarts = count;
  }

  /** True when the server starts on its first call rather than with the pool. */
  get lazy(): boolean {
    return (this.spec.lazy ?? this.options.lazy ?? false) && (this.options.deferStart?.(this.name) ?? true);
  }

  /** Connects (once); resolves when ready, failed or skipped, never rejects. A lazy server only goes idle: its first call connects it. */
  start(): Promise<void> {
    this.#started = true;
    if (this.#state === "connecting" && !this.#everReady && this.lazy) {
      this.#setState("idle");
      return Promise.resolve();
    }
    return this.#connect();
  }

  /** Resolves true once the server is ready, failed or skipped (starting it if nobody has), false when `timeoutMs` passes first. */
  async waitSettled(timeoutMs: number): Promise<boolean> {
    const settled = () => this.#state !== "connecting" && this.#state !== "reconnecting";
    if (settled()) return true;
    if (!this.#started) void this.start();
    return new Promise<boolean>((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.off("state", onState);
        resolve(value);
      };
      const onState = () => {
        if (settled()) done(true);
      };
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      this.on("state", onState);
    });
  }

  /** Resolves with a ready SDK client (for resources, prompts, completions), connecting now if the server is down. */
  async ensureReady(): Promise<DownstreamClient> {
    const channel = await this.#ensureChannel();
    // A server started for a resource read or a prompt, with no call after it, still stops when idle.
    this.#scheduleIdleStop();
    return channel.client;
  }

  /** Resolves with the ready channel, connecting now if the server is down. */
  async #ensureChannel(): Promise<DownstreamChannel> {
    if (this.#state === "closed") throw new ServerUnavailableError(this.name, "codemux is shutting down");
    if (this.#state === "skipped") throw new ServerUnavailableError(this.name, `it was not started: ${this.#error ?? "skipped"}`);
    if (this.#state !== "ready") {
      if (this.#retryTimer) {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = undefined;
      }
      await this.#connect();
    }
    if (this.#state !== "ready" || !this.#channel) {
      // needsLogin marks it as an AuthRequiredError: a caller can tell that only a login fixes it.
      throw new ServerUnavailableError(this.name, this.#error ?? `it is ${this.#state}`, {
        data: { sent: false, transient: this.#transientFailure, ...(this.#needsLoginFailure ? { needsLogin: true } : {}) },
      });
    }
    return this.#channel;
  }

  /**
   * Calls a tool. A failure before the request reached the server (refused connection, HTTP 502/503,
   * a process still restarting) is retried; after it was sent, only tools annotated read-only or idempotent are.
   */
  callTool(tool: string, args: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<ToolResult> {
    return tracing() ? this.#tracedCall(tool, args, options) : this.#call(tool, args, options);
  }

  /** A call inside a CLIENT span (MCP semantic conventions), whose context the request carries to the server (`_meta`, and the HTTP header). */
  #tracedCall(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<ToolResult> {
    const transport = this.spec.transport.type;
    const version = this.#channel?.protocolVersion;
    const attributes: Attributes = {
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": tool,
      "network.transport": transport === "stdio" ? "pipe" : "tcp",
      "codemux.server": this.name,
      "codemux.transport": transport,
    };
    if (version !== undefined) {
      attributes["mcp.protocol.version"] = version;
      attributes["codemux.era"] = version >= "2026" ? "modern" : "legacy";
    }
    if (transport !== "stdio") attributes["server.address"] = maskUrl(this.spec.transport.url);
    return inSpan(`tools/call ${tool}`, { kind: SpanKind.CLIENT, attributes }, (span) =>
      this.#call(tool, args, { ...options, traceMeta: traceCarrier() }).then((result) => {
        const retries = result._meta?.["codemux/retries"];
        span.setAttribute("codemux.retries", typeof retries === "number" ? retries : 0);
        if (result.isError === true) span.setAttribute("error.type", "tool_error");
        return result;
      }),
    );
  }

  #call(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<ToolResult> {
    if (!this.#allowed(tool)) return Promise.reject(new ToolNotFoundError(this.name, tool, toolFilterReason(this.spec.tools, tool), { denied: true }));
    this.#inFlight++;
    clearTimeout(this.#idleTimer);
    const request: ChannelCall = {
      name: tool,
      arguments: args ?? {},
      timeoutMs: options.timeoutMs ?? this.spec.callTimeoutMs,
      onprogress: options.onprogress,
      signal: options.signal,
      clientCapabilities: relayable(options.clientCapabilities, this.options.relay?.capabilities),
      inputRequired: options.inputRequired,
      caller: options.session,
      traceMeta: options.traceMeta,
      downstreamTask: options.downstreamTask,
    };
    const channel = this.#readyChannel(options);
    if (channel === undefined) return this.#attempts(request, options);
    // The common case in one promise layer (no async frame, no catch in between): a failure goes on to the retries.
    return channel.callTool(request).then(this.#answered, (error: unknown) => this.#attempts(request, options, this.#recover(error, request, options)));
  }

  /** A call answered on its first attempt: the in-flight count goes down as in #attempts' finally. */
  readonly #answered = (result: ToolResult): ToolResult => {
    this.#callEnded();
    return result;
  };

  #callEnded(): void {
    this.#inFlight--;
    this.#scheduleIdleStop();
  }

  /** Tries until an answer or a failure not worth retrying; `first` is the first attempt when it was already made. */
  async #attempts(request: ChannelCall, options: CallOptions, first?: Promise<ToolResult>): Promise<ToolResult> {
    try {
      for (let retries = 0; ; retries++) {
        let failure: unknown;
        try {
          const result = await (retries === 0 && first !== undefined ? first : this.#callOnce(request, options));
          if (retries > 0) result._meta = { ...result._meta, "codemux/retries": retries };
          return result;
        } catch (error) {
          failure = error;
        }
        // Worked out on a failure only: a call that succeeds pays for none of it.
        const delays = this.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
        const delay = delays[retries];
        const safeAfterSend = options.annotations?.readOnlyHint === true || options.annotations?.idempotentHint === true;
        if (delay === undefined || options.signal?.aborted || !retryable(failure, safeAfterSend)) throw failure;
        this.#logger.info(`[${this.name}] ${request.name}: ${(failure as Error).message}; retry ${retries + 1} of ${delays.length} in ${delay} ms`);
        trace.getActiveSpan()?.addEvent("retry", { "codemux.attempt": retries + 2, "codemux.retry.delay_ms": delay, "error.type": (failure as Error).name });
        await abortableSleep(delay, options.signal).catch((reason: unknown) => {
          throw new CallCancelledError(this.name, request.name, { cause: reason });
        });
      }
    } finally {
      this.#callEnded();
    }
  }

  /**
   * One request other than a tool call (`prompts/get`, `resources/read`, `completion/complete`), made for
   * `options.session` (connecting now if the server is down); no retries. Rejects with what the SDK raises.
   */
  async request(request: DownstreamRequest, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const channel = await this.#ensureChannel();
    this.#inFlight++;
    clearTimeout(this.#idleTimer);
    try {
      return await channel.request({
        ...request,
        timeoutMs: options.timeoutMs ?? this.spec.callTimeoutMs,
        signal: options.signal,
        clientCapabilities: relayable(options.clientCapabilities, this.options.relay?.capabilities),
        inputRequired: options.inputRequired,
        caller: options.session,
      });
    } finally {
      this.#callEnded();
    }
  }

  /** The channel when the server is ready and the call not already cancelled (a cancelled one takes the slow path, which says so). */
  #readyChannel(options: CallOptions): DownstreamChannel | undefined {
    return this.#state === "ready" && !options.signal?.aborted ? this.#channel : undefined;
  }

  /** One attempt: on the ready channel at once (no await before the request is written), else after connecting. */
  #callOnce(request: ChannelCall, options: CallOptions): Promise<ToolResult> {
    const channel = this.#readyChannel(options);
    if (channel === undefined) return this.#connectAndCall(request, options);
    return channel.callTool(request).catch((error: unknown) => this.#recover(error, request, options));
  }

  async #connectAndCall(request: ChannelCall, options: CallOptions): Promise<ToolResult> {
    if (options.signal?.aborted) throw new CallCancelledError(this.name, request.name);
    const channel = await this.#ensureChannel();
    return channel.callTool(request).catch((error: unknown) => this.#recover(error, request, options));
  }

  /** After a failed attempt: a Streamable HTTP server that restarted no longer knows our session, so a new one is started and the call sent once more. */
  async #recover(error: unknown, request: ChannelCall, options: CallOptions): Promise<ToolResult> {
    if (httpStatusOf(error) !== 404 || this.spec.transport.type !== "http") throw this.#translate(error, request, options);
    this.#logger.info(`[${this.name}] session expired (HTTP 404); re-initializing`);
    await this.#drop("the session expired");
    const fresh = await this.#ensureChannel();
    return fresh.callTool(request).catch((e: unknown) => {
      throw this.#translate(e, request, options);
    });
  }

  /** The one translation of a channel's failure into the PoolError the caller gets; a failure only a login fixes also marks the server failed. */
  #translate(error: unknown, request: ChannelCall, options: CallOptions): Error {
    const failure = callError(error, {
      server: this.name,
      tool: request.name,
      timeoutMs: request.timeoutMs,
      cancelled: options.signal?.aborted === true,
      ready: this.#state === "ready",
      url: this.spec.transport.type === "stdio" ? "" : this.spec.transport.url,
      closedBecause: () => this.#exitReason(),
    });
    if (AuthRequiredError.isInstance(failure)) this.#needsLogin(failure);
    return failure;
  }

  /** A lazy server with no call in flight is stopped after `idleStopMs`, keeping its tools; the next call starts it again. */
  #scheduleIdleStop(): void {
    const idleMs = this.spec.idleStopMs ?? this.options.idleStopMs ?? DEFAULT_IDLE_STOP_MS;
    if (!(this.spec.lazy ?? this.options.lazy) || idleMs <= 0 || this.#inFlight > 0) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => void this.#stopIdle(), idleMs);
    this.#idleTimer.unref();
  }

  async #stopIdle(): Promise<void> {
    const channel = this.#channel;
    if (this.#inFlight > 0 || this.#state !== "ready" || !channel) return;
    this.#logger.info(`[${this.name}] stopped after being unused; the next call starts it again`);
    // Dropped first, so that its close is not taken for a crash to recover from.
    this.#channel = undefined;
    this.#stopTimers();
    this.#setState("idle");
    await channel.close().catch(() => undefined);
  }

  /** Tells a running server that its client's roots changed (an isolated server's owner's); a stopped one asks when it starts. */
  notifyRootsChanged(): void {
    if (this.#state === "ready") this.#channel?.client.sendRootsListChanged().catch(() => undefined);
  }

  /** Lists the tools again (on `tools/list_changed`, on the refresh interval, or when a caller wants fresh data). */
  async refreshTools(): Promise<Tool[]> {
    const channel = this.#channel;
    if (!channel || this.#state !== "ready") return this.#tools;
    this.#setTools(await channel.listTools(this.spec.connectTimeoutMs));
    return this.#tools;
  }

  /** Ends the connection in any state; a server still starting is stopped too (its whole process group). */
  async close(): Promise<void> {
    this.#setState("closed");
    this.#stopTimers();
    this.#stopLoginWatch?.();
    clearTimeout(this.#idleTimer);
    const channels = [this.#channel, this.#pending, this.#pendingTransport];
    this.#channel = undefined;
    this.#pending = undefined;
    this.#pendingTransport = undefined;
    await Promise.all(channels.map((c) => c?.close().catch(() => undefined)));
  }

  #connect(): Promise<void> {
    this.#attempt ??= this.#attemptConnect().finally(() => {
      this.#attempt = undefined;
    });
    return this.#attempt;
  }

  /** The verdict to connect with: the one this connection found, else the remembered one; a 2025 one too old to trust is probed again. */
  #priorVerdict(): RememberedEra | undefined {
    // Pinned by the config: no probe, and no correction either.
    if (this.spec.protocol === "2025-11-25") return { kind: "legacy", at: Date.now() };
    if (!this.#eraLooked) {
      this.#eraLooked = true;
      this.#era = this.options.priorEra?.(this.name);
    }
    const era = this.#era;
    if (era?.kind === "legacy" && Date.now() - era.at > LEGACY_VERDICT_MAX_AGE_MS) return undefined;
    return era;
  }

  /** `reprobed`: this attempt follows one whose verdict proved wrong; it is not corrected twice. */
  async #attemptConnect(reprobed = false): Promise<void> {
    if (this.#state === "closed" || this.#state === "skipped") return;
    if (this.spec.problem) {
      this.#fail({ message: this.spec.problem, transient: false }, false);
      return;
    }
    if (this.spec.transport.type === "stdio") {
      const unsafe = selfSpawnReason(this.spec.transport, this.options.env ?? process.env);
      if (unsafe) {
        this.#error = unsafe;
        this.#setState("skipped");
        this.#logger.warn(`[${this.name}] not started: ${unsafe}.`);
        return;
      }
    }
    this.#setState(this.#everReady ? "reconnecting" : "connecting");
    // Each start tells its own story: a line the last process wrote would repeat in this one's messages.
    this.stderr.clear();
    const relay = this.options.relay;
    // The channel this attempt ends with: its events count only once it is the connection's, and while it is.
    let channel: DownstreamChannel | undefined;
    const current = () => channel !== undefined && this.#channel === channel;
    const sdk = new SdkChannel({
      clientInfo: this.options.clientInfo ?? { name: "codemux", version: "0.1.0" },
      capabilities: relay?.capabilities ?? {},
      // A silent stdio server is a 2025 one (short wait); over HTTP silence is an outage, given the whole connect time.
      probeTimeoutMs: this.spec.transport.type === "stdio" ? (this.options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS) : this.spec.connectTimeoutMs,
      // Over Streamable HTTP a server's question comes on the stream of the request it is about (see stream-requests.ts).
      readsStreams: this.spec.transport.type === "http",
      ...(relay ? { onrequest: (request, signal, caller) => relay.handle(this.name, request, { signal, owner: this.options.owner, caller }) } : {}),
      onnotification: (notification) => {
        if (current()) this.emit("notification", notification);
      },
      ontoolschanged: () => {
        if (!current()) return;
        this.#sawListChanged = true;
        this.#scheduleRefresh();
      },
      onclose: () => {
        if (current()) void this.#onDropped();
      },
    });
    this.#pending = sdk;
    let transport: unknown;
    let timer: NodeJS.Timeout | undefined;
    const prior = this.#priorVerdict();
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new PoolError("CONNECT_TIMEOUT", `did not finish connecting within ${this.spec.connectTimeoutMs} ms`)),
          this.spec.connectTimeoutMs,
        );
      });
      const { picked, tools } = await Promise.race([
        (async () => {
          const made = await (this.options.createTransport ?? createTransport)(this.spec.transport, {
            server: this.name,
            stderr: this.stderr,
            logger: this.#logger,
            ...(this.options.env ? { env: this.options.env } : {}),
            ...(this.options.owner && this.spec.credentials === "per-principal" ? { principal: this.options.owner.principal } : {}),
            streams: sdk,
          });
          transport = made;
          this.#pendingTransport = made;
          if (this.#pending !== sdk) throw new PoolError("NOT_CONNECTED", "codemux is shutting down");
          await sdk.connect(made, this.spec.connectTimeoutMs, prior && asPrior(prior));
          if (!reprobed && versionChanged(prior, sdk.serverInfo?.version)) throw new VersionChanged();
          // Picked once: HTTP and SSE keep the SDK's request path (sessions, resumption, per-request HTTP errors); 2026 servers too (the lane writes 2025 requests).
          const lane =
            this.spec.transport.type === "stdio" && sdk.verdict?.kind === "legacy" && callLaneEnabled(this.options.callLane, this.options.env ?? process.env);
          return { picked: lane ? new LaneChannel(sdk, made) : sdk, tools: await sdk.listTools(this.spec.connectTimeoutMs) };
        })(),
        timeout,
      ]);
      if ((this.#state as ServerState) === "closed") {
        await sdk.close().catch(() => undefined);
        return;
      }
      this.#pending = undefined;
      this.#pendingTransport = undefined;
      const found = sdk.verdict;
      // A verdict reused keeps its date, so that a 2025 one ages; a new one is dated now. A 2025 one keeps the version it was found with.
      if (found) this.#era = withVersion(prior?.kind === found.kind ? prior : { ...found, at: Date.now() }, sdk.serverInfo?.version);
      channel = picked;
      this.#channel = picked;
      this.#transport = transport;
      if (this.#everReady) this.#restarts += 1;
      this.#everReady = true;
      this.#readySince = Date.now();
      this.#error = undefined;
      this.#transientFailure = false;
      this.#needsLoginFailure = false;
      this.#stopLoginWatch?.();
      this.#setTools(tools);
      this.#setState("ready");
      this.#startSweep(picked);
      openListen(sdk.client, {
        server: this.name,
        logger: this.#logger,
        backoff: this.options.backoff,
        timeoutMs: this.spec.connectTimeoutMs,
        alive: current,
      });
      this.#logger.info(`[${this.name}] ready, ${this.#tools.length} tools`);
    } catch (error) {
      // Read before close() ends the process: an exit that close() caused is not why the attempt failed.
      const exitedFirst = exitOf(transport) !== undefined;
      if (this.#pending === sdk) {
        this.#pending = undefined;
        this.#pendingTransport = undefined;
      }
      await sdk.close().catch(() => undefined);
      // A transport made after close() began (the race lost) is closed here too.
      await (transport as { close?: () => Promise<void> } | undefined)?.close?.().catch(() => undefined);
      if ((this.#state as ServerState) === "closed") return;
      if (error instanceof VersionChanged) {
        this.#logger.info(`[${this.name}] has another version than when its era was found: probing it again`);
        this.#era = undefined;
        return this.#attemptConnect(true);
      }
      if (!reprobed && this.spec.protocol === undefined) {
        const corrected = correctedVerdict(error, prior, exitOf(transport) !== undefined && diedOnProbe(this.stderr.tail(this.stderr.maxLines)));
        if (corrected !== false) {
          this.#logger.info(
            `[${this.name}] ${corrected ? "is a 2025-era server (it exited on the era probe): starting it again" : "changed protocol era: probing it again"}`,
          );
          this.#era = corrected;
          return this.#attemptConnect(true);
        }
      }
      const failure = describeFailure(error, { name: this.name, spec: this.spec, stderr: this.stderr, transport, exitedFirst, everReady: this.#everReady });
      // Only a login fixes it: no restart loop; the next call tries again, and so does a login once stored.
      this.#fail(failure, !failure.needsLogin);
      if (failure.needsLogin) this.#watchLogin();
    } finally {
      clearTimeout(timer);
    }
  }

  /** A call found the login gone (expired, refresh refused): the server is marked failed with the reason; the others are untouched. */
  #needsLogin(failure: AuthRequiredError): void {
    const channel = this.#channel;
    this.#channel = undefined;
    this.#stopTimers();
    this.#error = failure.reason;
    this.#transientFailure = false;
    this.#needsLoginFailure = true;
    this.#setState("failed");
    this.#watchLogin();
    void channel?.close().catch(() => undefined);
  }

  /** While the server needs a login, one stored meanwhile (`codemux auth login` elsewhere) connects it, with no call needed. */
  #watchLogin(): void {
    if (this.#stopLoginWatch || this.spec.transport.type === "stdio") return;
    const watch = watchLogin({
      server: this.name,
      env: this.options.env ?? process.env,
      principal: this.spec.credentials === "per-principal" ? this.options.owner?.principal : undefined,
      onLogin: () => {
        this.#stopLoginWatch = undefined;
        if (this.#state !== "failed" || !this.#needsLoginFailure) return;
        this.#logger.info(`[${this.name}] a login was stored: connecting`);
        void this.#connect();
      },
    });
    this.#stopLoginWatch = () => {
      this.#stopLoginWatch = undefined;
      void watch.then((stop) => stop());
    };
  }

  #exitReason(transport = this.#transport): string {
    return exitReason(transport, this.stderr);
  }

  /** A state that is no failure, in words, for status(); a start is a state, not an error. */
  #detail(): string | undefined {
    switch (this.#state) {
      case "connecting":
        return `starting (${Math.round((Date.now() - this.#stateSince) / 1000)} s)`;
      case "closed":
        return "closed (codemux is shutting down)";
      case "idle":
        return "not running (lazy): it starts on the first call";
      default:
        return undefined;
    }
  }

  /** Why the server failed or dropped, for status(). */
  #reason(): string {
    if (this.#state === "reconnecting") return `reconnecting after: ${this.#error ?? "the connection dropped"}`;
    return this.#error ?? `it is ${this.#state}`;
  }

  async #onDropped(): Promise<void> {
    if (this.#state === "closed") return;
    this.#stopTimers();
    const reason = this.#exitReason();
    this.#logger.warn(`[${this.name}] disconnected: ${reason}`);
    if (Date.now() - this.#readySince > STABLE_AFTER_MS) this.#failures = 0;
    this.#channel = undefined;
    this.#fail({ message: reason, transient: true }, true);
  }

  async #drop(reason: string): Promise<void> {
    const channel = this.#channel;
    this.#channel = undefined;
    this.#stopTimers();
    this.#error = reason;
    this.#setState("reconnecting");
    await channel?.close().catch(() => undefined);
  }

  /** Marks the server down; when `retry`, schedules a restart with backoff until the attempts run out. */
  #fail(failure: Failure, retry: boolean): void {
    this.#error = failure.message;
    this.#transientFailure = failure.transient;
    this.#needsLoginFailure = failure.needsLogin === true;
    this.#failures += 1;
    const maxAttempts = this.options.backoff?.maxAttempts ?? DEFAULT_BACKOFF.maxAttempts;
    if (retry && this.#everReady && this.#failures <= maxAttempts) {
      const delay = backoffDelay(this.#failures, this.options.backoff);
      this.#setState("reconnecting");
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        void this.#connect();
      }, delay);
      this.#retryTimer.unref();
      this.#logger.info(`[${this.name}] reconnecting in ${delay} ms (attempt ${this.#failures}/${maxAttempts})`);
      return;
    }
    this.#setState("failed");
    this.#logger.warn(`[${this.name}] failed: ${failure.message}`);
  }

  #scheduleRefresh(): void {
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => {
      this.refreshTools().catch((error: unknown) => this.#logger.warn(`[${this.name}] could not refresh tools: ${(error as Error).message}`));
    }, this.options.listChangedDebounceMs ?? DEFAULT_LIST_CHANGED_DEBOUNCE_MS);
    this.#refreshTimer.unref();
  }

  /**
   * Re-lists the tools on an interval, unless the server has shown that it sends `tools/list_changed`. A 2026 server's
   * `ttlMs` on its last `tools/list` shortens the interval, never below `minListTtlMs`, never beyond the configured one.
   */
  #startSweep(channel: DownstreamChannel): void {
    const every = this.spec.refreshIntervalMs ?? this.options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS;
    clearInterval(this.#sweepTimer);
    if (every <= 0) return;
    const interval = () => {
      const ttl = channel.listTtlMs;
      return ttl === undefined ? every : Math.min(every, Math.max(ttl, this.options.minListTtlMs ?? MIN_LIST_TTL_MS));
    };
    const delay = interval();
    this.#sweepTimer = setInterval(() => {
      if (this.#channel !== channel || this.#state !== "ready") return;
      if (this.#sawListChanged && channel.capabilities?.tools?.listChanged) return;
      const before = JSON.stringify(this.#tools);
      channel
        .listTools(this.spec.connectTimeoutMs)
        .then((tools) => {
          if (this.#channel !== channel) return;
          const filtered = tools.filter((t) => this.#allowed(t.name));
          this.#lastRefreshAt = Date.now();
          if (JSON.stringify(filtered) !== before) {
            this.#logger.info(`[${this.name}] tool list changed on re-listing: ${filtered.length} tools`);
            this.#setTools(tools);
          }
        })
        .catch((error: unknown) => this.#logger.debug(`[${this.name}] could not re-list tools: ${(error as Error).message}`))
        .finally(() => {
          // A new caching hint sets a new interval.
          if (this.#channel === channel && interval() !== delay) this.#startSweep(channel);
        });
    }, delay);
    this.#sweepTimer.unref();
  }

  #stopTimers(): void {
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#refreshTimer);
    clearInterval(this.#sweepTimer);
    this.#retryTimer = undefined;
    this.#sweepTimer = undefined;
  }

  #setTools(tools: Tool[]): void {
    this.#tools = tools.filter((t) => this.#allowed(t.name));
    this.#lastRefreshAt = Date.now();
    this.emit("tools", this.#tools);
  }

  #setState(state: ServerState): void {
    if (this.#state === "closed") return;
    if (this.#state !== state) this.#stateSince = Date.now();
    this.#state = state;
    this.emit("state", this.status());
  }
}
