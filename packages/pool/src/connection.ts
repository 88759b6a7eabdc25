import type { ToolResult } from "@codemux/core";
import type { Tool, Transport } from "@modelcontextprotocol/client";
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import type { AuthRequiredError } from "./auth/auth-required";
import { watchLogin } from "./auth/login-watch";
import { backoffDelay } from "./backoff";
import { CallPath } from "./call-path";
import { callLaneEnabled, type DownstreamChannel, type DownstreamClient, type DownstreamNotification, type DownstreamRequest } from "./channel";
import type { ServerSpec } from "./config/types";
import type { CallOptions, ConnectionOptions, ServerState, ServerStatus } from "./connection-types";
import {
  DEFAULT_BACKOFF,
  DEFAULT_IDLE_STOP_MS,
  DEFAULT_LIST_CHANGED_DEBOUNCE_MS,
  DEFAULT_PROBE_TIMEOUT_MS,
  DEFAULT_REFRESH_INTERVAL_MS,
  LEGACY_VERDICT_MAX_AGE_MS,
  MIN_LIST_TTL_MS,
  STABLE_AFTER_MS,
} from "./defaults";
import { PoolError, ServerUnavailableError } from "./errors";
import { IdleStop } from "./idle-stop";
import { LaneChannel } from "./lane-channel";
import { openListen } from "./listen";
import { SdkChannel } from "./sdk-channel";
import { redactSecrets, redactingLogger, silentLogger, type Logger } from "@codemux/core";
import { selfSpawnReason } from "./self";
import { StderrRing } from "./stderr-ring";
import { createToolFilter } from "./tool-filter";
import { asPrior, correctedVerdict, diedOnProbe, type RememberedEra, slowProbe, versionChanged, VersionChanged, withVersion } from "./era-verdict";
import { describeFailure, exitOf, exitReason, type Failure } from "./failure-text";
import { createTransport, describeTransport } from "./transports";

export type {
  CallOptions,
  ConnectionOptions,
  InstanceOwner,
  RelayContext,
  RetryHints,
  ServerRequestRelay,
  ServerState,
  ServerStatus,
} from "./connection-types";
export type { RememberedEra } from "./era-verdict";

/** One connect attempt: its SDK channel, the transport once made, the era verdict it started from, and whether it re-probes a wrong one. */
interface Attempt {
  sdk: SdkChannel;
  transport: unknown;
  prior: RememberedEra | undefined;
  reprobed: boolean;
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
  readonly #inFlight: IdleStop;
  readonly #calls: CallPath;
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
    this.#inFlight = new IdleStop({
      idleMs: () => ((spec.lazy ?? options.lazy) ? (spec.idleStopMs ?? options.idleStopMs ?? DEFAULT_IDLE_STOP_MS) : 0),
      stop: () => this.#stopIdle(),
    });
    this.#calls = new CallPath({
      name: spec.name,
      spec,
      options,
      logger: this.#logger,
      inFlight: this.#inFlight,
      state: () => this.#state,
      channel: () => this.#channel,
      allowed: this.#allowed,
      ensureChannel: () => this.#ensureChannel(),
      drop: (reason) => this.#drop(reason),
      exitReason: () => this.#exitReason(),
      needsLogin: (failure) => this.#needsLogin(failure),
    });
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
    this.#inFlight.schedule();
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
    return this.#calls.callTool(tool, args, options);
  }

  /**
   * One request other than a tool call (`prompts/get`, `resources/read`, `completion/complete`), made for
   * `options.session` (connecting now if the server is down); no retries. Rejects with what the SDK raises.
   */
  request(request: DownstreamRequest, options: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.#calls.request(request, options);
  }

  async #stopIdle(): Promise<void> {
    const channel = this.#channel;
    if (this.#inFlight.busy || this.#state !== "ready" || !channel) return;
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
    this.#inFlight.cancel();
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

  /** `reprobed`: this attempt follows one whose verdict proved wrong; it is not corrected twice. `longProbe`: its era probe waits the whole connect time. */
  async #attemptConnect(reprobed = false, longProbe = false): Promise<void> {
    if (!this.#mayStart()) return;
    this.#setState(this.#everReady ? "reconnecting" : "connecting");
    // Each start tells its own story: a line the last process wrote would repeat in this one's messages.
    this.stderr.clear();
    // The channel this attempt ends with: its events count only once it is the connection's, and while it is.
    let channel: DownstreamChannel | undefined;
    const current = () => channel !== undefined && this.#channel === channel;
    const sdk = this.#sdkChannel(current, longProbe);
    this.#pending = sdk;
    let timer: NodeJS.Timeout | undefined;
    const prior = this.#priorVerdict();
    const attempt: Attempt = { sdk, transport: undefined, prior, reprobed };
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new PoolError("CONNECT_TIMEOUT", `did not finish connecting within ${this.spec.connectTimeoutMs} ms`)),
          this.spec.connectTimeoutMs,
        );
      });
      const { picked, tools } = await Promise.race([this.#open(attempt), timeout]);
      if ((this.#state as ServerState) === "closed") {
        await sdk.close().catch(() => undefined);
        return;
      }
      channel = picked;
      this.#connected(attempt, { picked, tools, current });
    } catch (error) {
      const again = await this.#connectFailed(error, attempt);
      if (again) return this.#attemptConnect(true, again.longProbe);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether a connect may begin: not once closed or skipped, nor for an entry with a problem or that would start codemux itself. */
  #mayStart(): boolean {
    if (this.#state === "closed" || this.#state === "skipped") return false;
    if (this.spec.problem) {
      this.#fail({ message: this.spec.problem, transient: false }, false);
      return false;
    }
    if (this.spec.transport.type === "stdio") {
      const unsafe = selfSpawnReason(this.spec.transport, this.options.env ?? process.env);
      if (unsafe) {
        this.#error = unsafe;
        this.#setState("skipped");
        this.#logger.warn(`[${this.name}] not started: ${unsafe}.`);
        return false;
      }
    }
    return true;
  }

  /** The SDK channel of one connect attempt; its events count while `current()` says the attempt's channel is the connection's. */
  #sdkChannel(current: () => boolean, longProbe: boolean): SdkChannel {
    const relay = this.options.relay;
    return new SdkChannel({
      clientInfo: this.options.clientInfo ?? { name: "codemux", version: "0.1.0" },
      capabilities: relay?.capabilities ?? {},
      // A silent stdio server is a 2025 one (short wait); over HTTP silence is an outage, given the whole connect time.
      probeTimeoutMs:
        this.spec.transport.type === "stdio" && !longProbe ? (this.options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS) : this.spec.connectTimeoutMs,
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
  }

  /** Makes the transport (kept in the attempt for the failure path), connects with the prior verdict, picks the channel and lists the tools. */
  async #open(attempt: Attempt): Promise<{ picked: DownstreamChannel; tools: Tool[] }> {
    const { sdk, prior } = attempt;
    const transport = await (this.options.createTransport ?? createTransport)(this.spec.transport, {
      server: this.name,
      stderr: this.stderr,
      logger: this.#logger,
      ...(this.options.env ? { env: this.options.env } : {}),
      ...(this.options.owner && this.spec.credentials === "per-principal" ? { principal: this.options.owner.principal } : {}),
      streams: sdk,
    });
    attempt.transport = transport;
    this.#pendingTransport = transport;
    if (this.#pending !== sdk) throw new PoolError("NOT_CONNECTED", "codemux is shutting down");
    await sdk.connect(transport, this.spec.connectTimeoutMs, prior && asPrior(prior));
    if (!attempt.reprobed && versionChanged(prior, sdk.serverInfo?.version)) throw new VersionChanged();
    // Picked once: HTTP and SSE keep the SDK's request path (sessions, resumption, per-request HTTP errors); stdio takes the lane in either era.
    const lane = this.spec.transport.type === "stdio" && sdk.verdict !== undefined && callLaneEnabled(this.options.callLane, this.options.env ?? process.env);
    return { picked: lane ? new LaneChannel(sdk, transport) : sdk, tools: await sdk.listTools(this.spec.connectTimeoutMs) };
  }

  /** A connect attempt that succeeded: its channel becomes the connection's, the server is ready. */
  #connected(attempt: Attempt, ready: { picked: DownstreamChannel; tools: Tool[]; current: () => boolean }): void {
    const { sdk, prior } = attempt;
    const { picked } = ready;
    this.#pending = undefined;
    this.#pendingTransport = undefined;
    const found = sdk.verdict;
    // A verdict reused keeps its date, so that a 2025 one ages; a new one is dated now. A 2025 one keeps the version it was found with.
    if (found) this.#era = withVersion(prior?.kind === found.kind ? prior : { ...found, at: Date.now() }, sdk.serverInfo?.version);
    this.#channel = picked;
    this.#transport = attempt.transport;
    if (this.#everReady) this.#restarts += 1;
    this.#everReady = true;
    this.#readySince = Date.now();
    this.#error = undefined;
    this.#transientFailure = false;
    this.#needsLoginFailure = false;
    this.#stopLoginWatch?.();
    this.#setTools(ready.tools);
    this.#setState("ready");
    this.#startSweep(picked);
    openListen(sdk.client, {
      server: this.name,
      logger: this.#logger,
      backoff: this.options.backoff,
      timeoutMs: this.spec.connectTimeoutMs,
      alive: ready.current,
    });
    this.#logger.info(`[${this.name}] ready, ${this.#tools.length} tools`);
  }

  /** A connect attempt that failed: closed, and the server marked down; or, when the era was wrong, how to probe it again. */
  async #connectFailed(error: unknown, attempt: Attempt): Promise<{ longProbe: boolean } | undefined> {
    const { sdk, transport } = attempt;
    // Read before close() ends the process: an exit that close() caused is not why the attempt failed.
    const exitedFirst = exitOf(transport) !== undefined;
    if (this.#pending === sdk) {
      this.#pending = undefined;
      this.#pendingTransport = undefined;
    }
    await sdk.close().catch(() => undefined);
    // A transport made after close() began (the race lost) is closed here too.
    await (transport as { close?: () => Promise<void> } | undefined)?.close?.().catch(() => undefined);
    if ((this.#state as ServerState) === "closed") return undefined;
    if (error instanceof VersionChanged) {
      this.#logger.info(`[${this.name}] has another version than when its era was found: probing it again`);
      this.#era = undefined;
      return { longProbe: false };
    }
    if (!attempt.reprobed && this.spec.protocol === undefined) {
      const corrected = correctedVerdict(error, attempt.prior, exitOf(transport) !== undefined && diedOnProbe(this.stderr.tail(this.stderr.maxLines)));
      if (corrected !== false) {
        const slow = slowProbe(error, attempt.prior);
        this.#logger.info(
          `[${this.name}] ${
            corrected
              ? "is a 2025-era server (it exited on the era probe): starting it again"
              : slow
                ? "refused the 2025 opening after a slow era probe: probing it again with the whole connect time"
                : "changed protocol era: probing it again"
          }`,
        );
        this.#era = corrected;
        return { longProbe: slow };
      }
    }
    const failure = describeFailure(error, { name: this.name, spec: this.spec, stderr: this.stderr, transport, exitedFirst, everReady: this.#everReady });
    // Only a login fixes it: no restart loop; the next call tries again, and so does a login once stored.
    this.#fail(failure, !failure.needsLogin);
    if (failure.needsLogin) this.#watchLogin();
    return undefined;
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
