import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Progress,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { EventEmitter } from "node:events";
import { backoffDelay, type BackoffOptions } from "./backoff";
import type { ServerSpec } from "./config/types";
import {
  CallCancelledError,
  CallTimeoutError,
  DownstreamError,
  PoolError,
  ServerDisconnectedError,
  ServerUnavailableError,
  ToolNotFoundError,
} from "./errors";
import { silentLogger, type Logger } from "./logger";
import { StderrRing } from "./stderr-ring";
import { ChildProcessTransport } from "./stdio-transport";
import { createToolFilter } from "./tool-filter";
import { createTransport, type TransportFactory } from "./transports";

export type ServerState = "connecting" | "ready" | "reconnecting" | "failed" | "closed";

export interface ServerStatus {
  name: string;
  state: ServerState;
  transport: "stdio" | "http" | "sse";
  toolCount: number;
  /** Why the server is not ready (set in "failed" and "reconnecting"). */
  error?: string;
  /** The last lines the server wrote to stderr (stdio only). */
  stderrTail: string[];
  /** How many times the connection was re-established after the first. */
  restarts: number;
  serverInfo?: { name: string; version: string };
}

export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
  /** Overrides the server's `callTimeoutMs`. */
  timeoutMs?: number;
}

export interface ConnectionOptions {
  createTransport?: TransportFactory;
  logger?: Logger;
  clientInfo?: { name: string; version: string };
  backoff?: BackoffOptions;
  /** Quiet period before a `tools/list_changed` triggers a refresh. */
  listChangedDebounceMs?: number;
}

interface ConnectionEvents {
  state: [ServerStatus];
  tools: [Tool[]];
}

const STABLE_AFTER_MS = 30_000;

/** One downstream server: its connection, state, tools, restarts and calls. */
export class ServerConnection extends EventEmitter<ConnectionEvents> {
  readonly stderr = new StderrRing();
  #state: ServerState = "connecting";
  #error: string | undefined;
  #client: Client | undefined;
  #transport: ReturnType<TransportFactory> | undefined;
  #tools: Tool[] = [];
  #attempt: Promise<void> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #refreshTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #restarts = 0;
  #everReady = false;
  #readySince = 0;
  readonly #allowed: (tool: string) => boolean;
  readonly #logger: Logger;

  constructor(readonly spec: ServerSpec, readonly options: ConnectionOptions = {}) {
    super();
    this.#allowed = createToolFilter(spec.tools);
    this.#logger = options.logger ?? silentLogger;
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
    return {
      name: this.name,
      state: this.#state,
      transport: this.spec.transport.type,
      toolCount: this.#tools.length,
      ...(this.#error ? { error: this.#error } : {}),
      stderrTail: this.stderr.tail(10),
      restarts: this.#restarts,
      ...(info ? { serverInfo: { name: info.name, version: info.version } } : {}),
    };
  }

  /** Connects (once); resolves when ready or failed, never rejects. */
  start(): Promise<void> {
    return this.#connect();
  }

  /** Resolves with a ready client, connecting now if the server is down. */
  async ensureReady(): Promise<Client> {
    if (this.#state === "closed") throw new ServerUnavailableError(this.name, "codemux is shutting down");
    if (this.#state !== "ready") {
      if (this.#retryTimer) {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = undefined;
      }
      await this.#connect();
    }
    if (this.#state !== "ready" || !this.#client) throw new ServerUnavailableError(this.name, this.#error ?? `it is ${this.#state}`);
    return this.#client;
  }

  async callTool(tool: string, args: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<CallToolResult> {
    if (!this.#allowed(tool)) throw new ToolNotFoundError(this.name, tool, "the tool is not allowed by this server's tools.allow/deny");
    if (options.signal?.aborted) throw new CallCancelledError(this.name, tool);
    const client = await this.ensureReady();
    try {
      return await this.#request(client, tool, args, options);
    } catch (error) {
      // A Streamable HTTP server that restarted no longer knows our session: start a new one and retry once.
      if (error instanceof StreamableHTTPError && error.code === 404) {
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

  /** Lists the tools again (on `tools/list_changed`, or when a caller wants fresh data). */
  async refreshTools(): Promise<Tool[]> {
    const client = this.#client;
    if (!client || this.#state !== "ready") return this.#tools;
    this.#setTools(await listAllTools(client, this.spec.connectTimeoutMs));
    return this.#tools;
  }

  async close(): Promise<void> {
    this.#setState("closed");
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#refreshTimer);
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => undefined);
  }

  #request(client: Client, tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<CallToolResult> {
    return client.request({ method: "tools/call", params: { name: tool, arguments: args ?? {} } }, CallToolResultSchema, {
      timeout: options.timeoutMs ?? this.spec.callTimeoutMs,
      // Asking for progress (even when our caller did not) lets long calls that report it outlive the timeout.
      onprogress: options.onprogress ?? (() => undefined),
      resetTimeoutOnProgress: true,
      ...(options.signal ? { signal: options.signal } : {}),
    }) as Promise<CallToolResult>;
  }

  #translate(error: unknown, tool: string, options: CallOptions): Error {
    if (error instanceof PoolError) return error;
    if (options.signal?.aborted) return new CallCancelledError(this.name, tool, { cause: error });
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) return new CallTimeoutError(this.name, tool, options.timeoutMs ?? this.spec.callTimeoutMs, { cause: error });
      if (error.code === ErrorCode.ConnectionClosed) return new ServerDisconnectedError(this.name, this.#exitReason(), { cause: error });
      return new DownstreamError(this.name, tool, error.message.replace(/^MCP error -?\d+: /, ""), error.code, { cause: error });
    }
    if (this.#state !== "ready") return new ServerDisconnectedError(this.name, this.#exitReason(), { cause: error });
    const network = networkFailure(error);
    if (network) return new ServerUnavailableError(this.name, `cannot reach it (${network}); it is tried again on the next call`, { cause: error });
    return new DownstreamError(this.name, tool, error instanceof Error ? error.message : String(error), undefined, { cause: error });
  }

  #connect(): Promise<void> {
    this.#attempt ??= this.#attemptConnect().finally(() => {
      this.#attempt = undefined;
    });
    return this.#attempt;
  }

  async #attemptConnect(): Promise<void> {
    if (this.#state === "closed") return;
    if (this.spec.problem) {
      this.#fail(this.spec.problem, false);
      return;
    }
    this.#setState(this.#everReady ? "reconnecting" : "connecting");
    const client = new Client(this.options.clientInfo ?? { name: "codemux", version: "0.1.0" }, { capabilities: {} });
    const transport = (this.options.createTransport ?? createTransport)(this.spec.transport, { server: this.name, stderr: this.stderr, logger: this.#logger });
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PoolError("CONNECT_TIMEOUT", `did not finish connecting within ${this.spec.connectTimeoutMs} ms`)), this.spec.connectTimeoutMs);
      });
      const tools = await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: this.spec.connectTimeoutMs });
          return listAllTools(client, this.spec.connectTimeoutMs);
        })(),
        timeout,
      ]);
      if ((this.#state as ServerState) === "closed") {
        await client.close().catch(() => undefined);
        return;
      }
      this.#client = client;
      this.#transport = transport;
      client.onclose = () => {
        if (this.#client === client) void this.#onDropped();
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => this.#scheduleRefresh());
      if (this.#everReady) this.#restarts += 1;
      this.#everReady = true;
      this.#readySince = Date.now();
      this.#error = undefined;
      this.#setTools(tools);
      this.#setState("ready");
      this.#logger.info(`[${this.name}] ready, ${this.#tools.length} tools`);
    } catch (error) {
      await client.close().catch(() => undefined);
      this.#fail(this.#describeFailure(error, transport), true);
    } finally {
      clearTimeout(timer);
    }
  }

  #describeFailure(error: unknown, transport: ReturnType<TransportFactory>): string {
    if (error instanceof PoolError && error.code === "CONNECT_TIMEOUT") return withTail(error.message, this.stderr.tail(5));
    if (error instanceof StreamableHTTPError || error instanceof SseError) {
      return `HTTP ${error.code ?? "error"}: ${error.message.replace(/^(Streamable HTTP|SSE) error: /, "")}`;
    }
    const message = error instanceof Error ? error.message : String(error);
    if (transport instanceof ChildProcessTransport && transport.exit) return this.#exitReason(transport);
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return this.#exitReason(transport);
    return withTail(message.replace(/^MCP error -?\d+: /, ""), this.stderr.tail(5));
  }

  #exitReason(transport = this.#transport): string {
    const exit = transport instanceof ChildProcessTransport ? transport.exit : undefined;
    const how = exit ? (exit.signal ? `the process was killed by ${exit.signal}` : `the process exited with code ${exit.code}`) : "the connection closed";
    return withTail(how, this.stderr.tail(5));
  }

  async #onDropped(): Promise<void> {
    if (this.#state === "closed") return;
    const reason = this.#exitReason();
    this.#logger.warn(`[${this.name}] disconnected: ${reason}`);
    if (Date.now() - this.#readySince > STABLE_AFTER_MS) this.#failures = 0;
    this.#client = undefined;
    this.#fail(reason, true);
  }

  async #drop(reason: string): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#error = reason;
    this.#setState("reconnecting");
    await client?.close().catch(() => undefined);
  }

  /** Marks the server down; when `retry`, schedules a restart with backoff until the attempts run out. */
  #fail(reason: string, retry: boolean): void {
    this.#error = reason;
    this.#failures += 1;
    const maxAttempts = this.options.backoff?.maxAttempts ?? 5;
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
    this.#logger.warn(`[${this.name}] failed: ${reason}`);
  }

  #scheduleRefresh(): void {
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => {
      this.refreshTools().catch((error: unknown) => this.#logger.warn(`[${this.name}] could not refresh tools: ${(error as Error).message}`));
    }, this.options.listChangedDebounceMs ?? 100);
    this.#refreshTimer.unref();
  }

  #setTools(tools: Tool[]): void {
    this.#tools = tools.filter((t) => this.#allowed(t.name));
    this.emit("tools", this.#tools);
  }

  #setState(state: ServerState): void {
    if (this.#state === "closed") return;
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

/** fetch() reports "fetch failed" and keeps the reason (ECONNREFUSED, ENOTFOUND...) in its cause. */
function networkFailure(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || !/fetch failed/i.test(error.message)) return undefined;
  const cause = error.cause as { code?: string; message?: string } | undefined;
  return cause?.message ?? cause?.code ?? "network error";
}

function withTail(message: string, tail: string[]): string {
  return tail.length ? `${message}; stderr: ${tail.join(" | ")}` : message;
}
