import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
  type Progress,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { EventEmitter } from "node:events";
import { AuthRequiredError, isAuthFailure, needsLoginReason } from "./auth/auth-required";
import { backoffDelay, type BackoffOptions } from "./backoff";
import { CallLane, type LaneCallOptions } from "./call-lane";
import type { ServerSpec } from "./config/types";
import {
  DEFAULT_BACKOFF,
  DEFAULT_IDLE_STOP_MS,
  DEFAULT_LIST_CHANGED_DEBOUNCE_MS,
  DEFAULT_REFRESH_INTERVAL_MS,
  DEFAULT_RETRY_DELAYS_MS,
  STABLE_AFTER_MS,
} from "./defaults";
import { CallCancelledError, CallTimeoutError, DownstreamError, PoolError, ServerDisconnectedError, ServerUnavailableError, ToolNotFoundError } from "./errors";
import { describeHttpError, describeNetworkFailure, httpStatusOf, isTlsCode, networkCause } from "./http-errors";
import { redactSecrets, redactingLogger, silentLogger, type Logger } from "@codemux/core";
import { selfSpawnReason } from "./self";
import { StderrRing } from "./stderr-ring";
import { createToolFilter, toolFilterReason } from "./tool-filter";
import { createTransport, describeTransport, type TransportFactory } from "./transports";

/**
 * `skipped`: never started, because starting it would be unsafe (it is codemux itself); `error` says why.
 * `idle`: a lazy server not started yet, or stopped after being unused; the next call starts it.
 */
export type ServerState = "connecting" | "ready" | "reconnecting" | "failed" | "skipped" | "closed" | "idle";

export interface ServerStatus {
  name: string;
  state: ServerState;
  transport: "stdio" | "http" | "sse";
  /** The command line or URL, with secrets masked; env and header values never appear. */
  endpoint: string;
  toolCount: number;
  /** Why the server failed or dropped: set in `failed`, `reconnecting` and `skipped` (secrets masked). */
  error?: string;
  /** The state in words where it is no failure: `starting (3 s)` while connecting, what `idle` and `closed` mean. */
  detail?: string;
  /** What the config parser noticed about this entry (unknown keys, with a did-you-mean). */
  warnings?: string[];
  /** The last lines the server wrote to stderr (stdio only; secrets masked). */
  stderrTail: string[];
  /** How many times the connection was re-established after the first. */
  restarts: number;
  serverInfo?: { name: string; version: string };
  /** When the tool list was last fetched (ISO 8601). */
  lastRefreshAt?: string;
}

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
}

/**
 * Requests a downstream server sends to its client (sampling, elicitation, roots), relayed by codemux
 * to the right client session. Only the capabilities given here are declared to the servers.
 */
export interface ServerRequestRelay {
  capabilities: ClientCapabilities;
  /** Answers one request of `server`; rejects (an McpError) when no client session can answer it. */
  handle(server: string, request: { method: string; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Record<string, unknown>>;
}

/** A notification from a downstream server that codemux passes on (logging, resources, prompts). */
export interface DownstreamNotification {
  method: string;
  params?: Record<string, unknown>;
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
  /** The environment codemux runs in (proxy variables, what stdio servers inherit, the nesting marker); `process.env` by default. */
  env?: NodeJS.ProcessEnv;
}

interface ConnectionEvents {
  state: [ServerStatus];
  tools: [Tool[]];
  notification: [DownstreamNotification];
}

type Failure = { message: string; transient: boolean; needsLogin?: boolean };

/** One downstream server: its connection, state, tools, restarts and calls. */
export class ServerConnection extends EventEmitter<ConnectionEvents> {
  readonly stderr = new StderrRing();
  #state: ServerState = "connecting";
  #stateSince = Date.now();
  #error: string | undefined;
  #transientFailure = false;
  #client: Client | undefined;
  /** The fast lane for tools/call on the ready client (stdio only); used while its `client` is `#client`. */
  #lane: CallLane | undefined;
  #pending: Client | undefined;
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
  readonly #allowed: (tool: string) => boolean;
  readonly #logger: Logger;

  constructor(
    readonly spec: ServerSpec,
    readonly options: ConnectionOptions = {},
  ) {
    super();
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
    const info = this.#client?.getServerVersion();
    const detail = this.#detail();
    const error = this.#state === "ready" || detail !== undefined ? undefined : this.#reason();
    return {
      name: this.name,
      state: this.#state,
      transport: this.spec.transport.type,
      endpoint: describeTransport(this.spec.transport),
      toolCount: this.#tools.length,
      ...(error ? { error: redactSecrets(error) } : {}),
      ...(detail ? { detail } : {}),
      ...(this.spec.warnings?.length ? { warnings: this.spec.warnings } : {}),
      stderrTail: this.stderr.tail(10).map(redactSecrets),
      restarts: this.#restarts,
      ...(info ? { serverInfo: { name: info.name, version: info.version } } : {}),
      ...(this.#lastRefreshAt ? { lastRefreshAt: new Date(this.#lastRefreshAt).toISOString() } : {}),
    };
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

  /** Resolves with a ready client, connecting now if the server is down. */
  async ensureReady(): Promise<Client> {
    if (this.#state === "closed") throw new ServerUnavailableError(this.name, "codemux is shutting down");
    if (this.#state === "skipped") throw new ServerUnavailableError(this.name, `it was not started: ${this.#error ?? "skipped"}`);
    if (this.#state !== "ready") {
      if (this.#retryTimer) {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = undefined;
      }
      await this.#connect();
    }
    if (this.#state !== "ready" || !this.#client) {
      throw new ServerUnavailableError(this.name, this.#error ?? `it is ${this.#state}`, { data: { sent: false, transient: this.#transientFailure } });
    }
    return this.#client;
  }

  /**
   * Calls a tool. A failure before the request reached the server (refused connection, HTTP 502/503,
   * a process still restarting) is retried; after it was sent, only tools annotated read-only or idempotent are.
   */
  callTool(tool: string, args: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<CallToolResult> {
    if (!this.#allowed(tool)) return Promise.reject(new ToolNotFoundError(this.name, tool, toolFilterReason(this.spec.tools, tool), { denied: true }));
    this.#inFlight++;
    clearTimeout(this.#idleTimer);
    const lane = this.#lane;
    if (lane === undefined || !this.#onLane(lane, options)) return this.#attempts({ tool, args, options });
    // The common case in one promise layer (no async frame, no catch in between): a failure goes on to the retries.
    return lane
      .call(tool, args ?? {}, this.#laneOptions(options))
      .then(this.#answered, (error: unknown) => this.#attempts({ tool, args, options }, { error: this.#translate(error, tool, options) }));
  }

  /** A call answered on its first attempt: the in-flight count goes down as in #attempts' finally. */
  readonly #answered = (result: CallToolResult): CallToolResult => {
    this.#callEnded();
    return result;
  };

  #callEnded(): void {
    this.#inFlight--;
    this.#scheduleIdleStop();
  }

  /** Tries until an answer or a failure not worth retrying; `first` is the first attempt's failure when it was already made. */
  async #attempts(
    call: { tool: string; args: Record<string, unknown> | undefined; options: CallOptions },
    first?: { error: unknown },
  ): Promise<CallToolResult> {
    const { tool, args, options } = call;
    try {
      for (let retries = 0; ; retries++) {
        let failure: unknown;
        if (retries === 0 && first !== undefined) {
          failure = first.error;
        } else {
          try {
            const result = await this.#callOnce(tool, args, options);
            if (retries > 0) result._meta = { ...result._meta, "codemux/retries": retries };
            return result;
          } catch (error) {
            failure = error;
          }
        }
        // Worked out on a failure only: a call that succeeds pays for none of it.
        const delays = this.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
        const delay = delays[retries];
        const safeAfterSend = options.annotations?.readOnlyHint === true || options.annotations?.idempotentHint === true;
        if (delay === undefined || options.signal?.aborted || !retryable(failure, safeAfterSend)) throw failure;
        this.#logger.info(`[${this.name}] ${tool}: ${(failure as Error).message}; retry ${retries + 1} of ${delays.length} in ${delay} ms`);
        await abortableSleep(delay, options.signal).catch((reason: unknown) => {
          throw new CallCancelledError(this.name, tool, { cause: reason });
        });
      }
    } finally {
      this.#callEnded();
    }
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
    const client = this.#client;
    if (this.#inFlight > 0 || this.#state !== "ready" || !client) return;
    this.#logger.info(`[${this.name}] stopped after being unused; the next call starts it again`);
    // Dropped first, so that its close is not taken for a crash to recover from.
    this.#client = undefined;
    this.#stopTimers();
    this.#setState("idle");
    await client.close().catch(() => undefined);
  }

  /** Lists the tools again (on `tools/list_changed`, on the refresh interval, or when a caller wants fresh data). */
  async refreshTools(): Promise<Tool[]> {
    const client = this.#client;
    if (!client || this.#state !== "ready") return this.#tools;
    this.#setTools(await listAllTools(client, this.spec.connectTimeoutMs));
    return this.#tools;
  }

  /** Ends the connection in any state; a server still starting is stopped too (its whole process group). */
  async close(): Promise<void> {
    this.#setState("closed");
    this.#stopTimers();
    clearTimeout(this.#idleTimer);
    const clients = [this.#client, this.#pending];
    this.#client = undefined;
    this.#pending = undefined;
    await Promise.all(clients.map((c) => c?.close().catch(() => undefined)));
  }

  /** One attempt. A ready stdio server is called on the lane at once: no await before the request is written. */
  #callOnce(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    const lane = this.#lane;
    if (lane !== undefined && this.#onLane(lane, options)) {
      return lane.call(tool, args ?? {}, this.#laneOptions(options)).catch((error: unknown) => {
        throw this.#translate(error, tool, options);
      });
    }
    return this.#connectAndCall(tool, args, options);
  }

  /** The lane serves the ready client it was made for; an aborted call takes the slow path, which says so. */
  #onLane(lane: CallLane, options: CallOptions): boolean {
    return lane.client === this.#client && this.#state === "ready" && !options.signal?.aborted;
  }

  #laneOptions(options: CallOptions): LaneCallOptions {
    return { timeout: options.timeoutMs ?? this.spec.callTimeoutMs, onprogress: options.onprogress, signal: options.signal };
  }

  async #connectAndCall(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    if (options.signal?.aborted) throw new CallCancelledError(this.name, tool);
    const client = await this.ensureReady();
    try {
      return await this.#request(client, tool, args, options);
    } catch (error) {
      // A Streamable HTTP server that restarted no longer knows our session: start a new one and retry once.
      if (httpStatusOf(error) === 404 && this.spec.transport.type === "http") {
        this.#logger.info(`[${this.name}] session expired (HTTP 404); re-initializing`);
        await this.#drop("the session expired");
        const fresh = await this.ensureReady();
        return this.#request(fresh, tool, args, options).catch((e: unknown) => {
          throw this.#translate(e, tool, options);
        });
      }
      throw this.#translate(error, tool, options);
    }
  }

  #request(client: Client, tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    const lane = this.#lane;
    if (lane?.client === client) return lane.call(tool, args ?? {}, this.#laneOptions(options));
    const signal = options.signal;
    const request = (requestSignal: AbortSignal | undefined) =>
      client.request({ method: "tools/call", params: { name: tool, arguments: args ?? {} } }, CallToolResultSchema, {
        timeout: options.timeoutMs ?? this.spec.callTimeoutMs,
        // Asking for progress (even when our caller did not) lets long calls that report it outlive the timeout.
        onprogress: options.onprogress ?? (() => undefined),
        resetTimeoutOnProgress: true,
        ...(requestSignal ? { signal: requestSignal } : {}),
      }) as Promise<CallToolResult>;
    if (!signal) return request(undefined);
    // The SDK never removes its abort listener: given the caller's signal, an abort after the answer would still
    // send notifications/cancelled. It gets a signal of this request alone, cut from the caller's once settled.
    const controller = new AbortController();
    const forward = () => controller.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    return request(controller.signal).finally(() => signal.removeEventListener("abort", forward));
  }

  /** A PoolError for the caller; `data.sent` says whether the request may have reached the server, `data.transient` whether trying again may help. */
  #translate(error: unknown, tool: string, options: CallOptions): Error {
    if (options.signal?.aborted) return new CallCancelledError(this.name, tool, { cause: error });
    if (isAuthFailure(error)) return this.#needsLogin(error);
    if (PoolError.isInstance(error)) {
      if (error.code === "NOT_CONNECTED")
        return new ServerUnavailableError(this.name, "the server process is not running; it is restarted on the next call", {
          cause: error,
          data: { sent: false, transient: true },
        });
      return error;
    }
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) return new CallTimeoutError(this.name, tool, options.timeoutMs ?? this.spec.callTimeoutMs, { cause: error });
      if (error.code === ErrorCode.ConnectionClosed)
        return new ServerDisconnectedError(this.name, this.#exitReason(), { cause: error, data: { sent: true, transient: true } });
      return new DownstreamError(this.name, tool, error.message.replace(/^MCP error -?\d+: /, ""), error.code, { cause: error });
    }
    const url = this.spec.transport.type === "stdio" ? "" : this.spec.transport.url;
    const network = networkCause(error);
    if (network) {
      const notSent =
        ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "PROXY_CONNECT_FAILED", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH", "ENETUNREACH"].includes(
          network.code ?? "",
        ) || isTlsCode(network.code);
      return new ServerUnavailableError(this.name, `${describeNetworkFailure(error, url)}; it is tried again on the next call`, {
        cause: error,
        data: { sent: !notSent, transient: !isTlsCode(network.code) },
      });
    }
    const status = httpStatusOf(error);
    if (status !== undefined) {
      const data = { httpStatus: status, sent: !(status === 502 || status === 503 || status === 429), transient: [429, 502, 503, 504].includes(status) };
      return new DownstreamError(this.name, tool, describeHttpError(error, url) ?? `HTTP ${status}`, undefined, { cause: error, data });
    }
    if (this.#state !== "ready") return new ServerDisconnectedError(this.name, this.#exitReason(), { cause: error, data: { sent: true, transient: true } });
    return new DownstreamError(this.name, tool, error instanceof Error ? error.message : String(error), undefined, { cause: error });
  }

  #connect(): Promise<void> {
    this.#attempt ??= this.#attemptConnect().finally(() => {
      this.#attempt = undefined;
    });
    return this.#attempt;
  }

  async #attemptConnect(): Promise<void> {
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
    const client = new Client(this.options.clientInfo ?? { name: "codemux", version: "0.1.0" }, { capabilities: this.options.relay?.capabilities ?? {} });
    this.#relayTo(client);
    this.#pending = client;
    let transport: unknown;
    let lane: CallLane | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new PoolError("CONNECT_TIMEOUT", `did not finish connecting within ${this.spec.connectTimeoutMs} ms`)),
          this.spec.connectTimeoutMs,
        );
      });
      const tools = await Promise.race([
        (async () => {
          const made = await (this.options.createTransport ?? createTransport)(this.spec.transport, {
            server: this.name,
            stderr: this.stderr,
            logger: this.#logger,
            ...(this.options.env ? { env: this.options.env } : {}),
          });
          transport = made;
          if (this.#pending !== client) throw new PoolError("NOT_CONNECTED", "codemux is shutting down");
          await client.connect(made, { timeout: this.spec.connectTimeoutMs });
          // HTTP and SSE keep the SDK's request path (sessions, resumption, per-request HTTP errors).
          if (this.spec.transport.type === "stdio") lane = new CallLane(client, made);
          return listAllTools(client, this.spec.connectTimeoutMs);
        })(),
        timeout,
      ]);
      if ((this.#state as ServerState) === "closed") {
        await client.close().catch(() => undefined);
        return;
      }
      this.#pending = undefined;
      this.#client = client;
      this.#lane = lane;
      this.#transport = transport;
      client.onclose = () => {
        if (this.#client === client) void this.#onDropped();
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        this.#sawListChanged = true;
        this.#scheduleRefresh();
      });
      if (this.#everReady) this.#restarts += 1;
      this.#everReady = true;
      this.#readySince = Date.now();
      this.#error = undefined;
      this.#transientFailure = false;
      this.#setTools(tools);
      this.#setState("ready");
      this.#startSweep(client);
      this.#logger.info(`[${this.name}] ready, ${this.#tools.length} tools`);
    } catch (error) {
      if (this.#pending === client) this.#pending = undefined;
      await client.close().catch(() => undefined);
      // A transport made after close() began (the race lost) is closed here too.
      await (transport as { close?: () => Promise<void> } | undefined)?.close?.().catch(() => undefined);
      if ((this.#state as ServerState) === "closed") return;
      const failure = this.#describeFailure(error, transport);
      // Only a login fixes it: no restart loop, the next call tries again (after codemux auth login).
      this.#fail(failure, !failure.needsLogin);
    } finally {
      clearTimeout(timer);
    }
  }

  #describeFailure(error: unknown, transport: unknown): Failure {
    const url = this.spec.transport.type === "stdio" ? "" : this.spec.transport.url;
    if (PoolError.isInstance(error) && error.code === "CONNECT_TIMEOUT") {
      return { message: withConfigNote(withTail(error.message, this.stderr.telling(5)), this.spec.warnings), transient: false };
    }
    if (isAuthFailure(error))
      return {
        message: AuthRequiredError.isInstance(error) ? error.reason : needsLoginReason(this.name, "the server refused the stored login"),
        transient: false,
        needsLogin: true,
      };
    const http = describeHttpError(error, url);
    if (http && httpStatusOf(error) === 401)
      return { message: `${http}; if it uses OAuth, run \`codemux auth login ${this.name}\``, transient: false, needsLogin: true };
    if (http) return { message: http, transient: http.startsWith("cannot reach") || [429, 502, 503, 504].includes(httpStatusOf(error) ?? 0) };
    const network = describeNetworkFailure(error, url);
    if (network) return { message: network, transient: !isTlsCode(networkCause(error)?.code) };
    if (PoolError.isInstance(error) && (error.code === "COMMAND_NOT_FOUND" || error.code === "SPAWN_FAILED"))
      return { message: withTail(error.message, this.stderr.telling(5)), transient: false };
    const exited = exitOf(transport);
    if (exited || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed))
      return { message: this.#exitReason(transport), transient: this.#everReady };
    const message = error instanceof Error ? error.message : String(error);
    return { message: withTail(message.replace(/^MCP error -?\d+: /, ""), this.stderr.telling(5)), transient: false };
  }

  /** A call found the login gone (expired, refresh refused): the server is marked failed with the reason; the others are untouched. */
  #needsLogin(error: unknown): Error {
    const failure = AuthRequiredError.isInstance(error) ? error : new AuthRequiredError(this.name, "the server refused the stored login", { cause: error });
    const client = this.#client;
    this.#client = undefined;
    this.#stopTimers();
    this.#error = failure.reason;
    this.#transientFailure = false;
    this.#setState("failed");
    void client?.close().catch(() => undefined);
    return failure;
  }

  #exitReason(transport = this.#transport): string {
    const exit = exitOf(transport);
    const how = exit ? (exit.signal ? `the process was killed by ${exit.signal}` : `the process exited with code ${exit.code}`) : "the connection closed";
    return withTail(how, this.stderr.telling(5));
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
    this.#client = undefined;
    this.#fail({ message: reason, transient: true }, true);
  }

  async #drop(reason: string): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#stopTimers();
    this.#error = reason;
    this.#setState("reconnecting");
    await client?.close().catch(() => undefined);
  }

  /** Marks the server down; when `retry`, schedules a restart with backoff until the attempts run out. */
  #fail(failure: Failure, retry: boolean): void {
    this.#error = failure.message;
    this.#transientFailure = failure.transient;
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

  /** Re-lists the tools on an interval, unless the server has shown that it sends `tools/list_changed`. */
  #startSweep(client: Client): void {
    const every = this.spec.refreshIntervalMs ?? this.options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS;
    clearInterval(this.#sweepTimer);
    if (every <= 0) return;
    this.#sweepTimer = setInterval(() => {
      if (this.#client !== client || this.#state !== "ready") return;
      if (this.#sawListChanged && client.getServerCapabilities()?.tools?.listChanged) return;
      const before = JSON.stringify(this.#tools);
      listAllTools(client, this.spec.connectTimeoutMs)
        .then((tools) => {
          if (this.#client !== client) return;
          const filtered = tools.filter((t) => this.#allowed(t.name));
          this.#lastRefreshAt = Date.now();
          if (JSON.stringify(filtered) !== before) {
            this.#logger.info(`[${this.name}] tool list changed on re-listing: ${filtered.length} tools`);
            this.#setTools(tools);
          }
        })
        .catch((error: unknown) => this.#logger.debug(`[${this.name}] could not re-list tools: ${(error as Error).message}`));
    }, every);
    this.#sweepTimer.unref();
  }

  #stopTimers(): void {
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#refreshTimer);
    clearInterval(this.#sweepTimer);
    this.#retryTimer = undefined;
    this.#sweepTimer = undefined;
  }

  /** Server-to-client requests go to the relay; notifications worth passing on become events. */
  #relayTo(client: Client): void {
    const relay = this.options.relay;
    if (relay) {
      const forward = (request: { method: string; params?: Record<string, unknown> }, extra: { signal: AbortSignal }) =>
        relay.handle(this.name, request, extra.signal);
      if (relay.capabilities.sampling) client.setRequestHandler(CreateMessageRequestSchema, forward as never);
      if (relay.capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, forward as never);
      if (relay.capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, forward as never);
    }
    for (const schema of [
      LoggingMessageNotificationSchema,
      ResourceUpdatedNotificationSchema,
      ResourceListChangedNotificationSchema,
      PromptListChangedNotificationSchema,
    ]) {
      client.setNotificationHandler(schema, async (notification) => {
        if (this.#client === client) this.emit("notification", notification as DownstreamNotification);
      });
    }
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

async function listAllTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Safe to try again: a transient failure before the request reached the server, or any transient failure of a read-only or idempotent tool. */
function retryable(error: unknown, safeAfterSend: boolean): boolean {
  if (!PoolError.isInstance(error) || error.data?.transient !== true) return false;
  return error.data.sent === false || safeAfterSend;
}

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function exitOf(transport: unknown): { code: number | null; signal: NodeJS.Signals | null } | undefined {
  return typeof transport === "object" && transport !== null && "exit" in transport
    ? (transport as { exit?: { code: number | null; signal: NodeJS.Signals | null } }).exit
    : undefined;
}

function withTail(message: string, tail: string[]): string {
  return tail.length ? `${message}; stderr: ${tail.join(" | ")}` : message;
}

function withConfigNote(message: string, warnings: string[] | undefined): string {
  return warnings?.length ? `${message} (config: ${warnings.join(" ")})` : message;
}
