import type { Logger, ToolResult } from "@codemux/core";
import { trace, type Attributes } from "@opentelemetry/api";
import { AuthRequiredError } from "./auth/auth-required";
import { abortableSleep } from "./backoff";
import { callError } from "./call-errors";
import { relayable, retryable } from "./call-policy";
import type { ChannelCall, DownstreamChannel, DownstreamRequest } from "./channel";
import type { ServerSpec } from "./config/types";
import type { CallOptions, ConnectionOptions, ServerState } from "./connection-types";
import { DEFAULT_RETRY_DELAYS_MS } from "./defaults";
import { CallCancelledError, ToolNotFoundError } from "./errors";
import { httpStatusOf } from "./http-errors";
import type { IdleStop } from "./idle-stop";
import { maskUrl } from "@codemux/core";
import { toolFilterReason } from "./tool-filter";
import { inSpan, SpanKind, traceCarrier, tracing } from "./tracing";

/** What the call path needs of its server's connection. */
export interface CallHost {
  readonly name: string;
  readonly spec: ServerSpec;
  readonly options: ConnectionOptions;
  readonly logger: Logger;
  /** Counts the requests in flight (a lazy server is stopped once idle). */
  readonly inFlight: IdleStop;
  state(): ServerState;
  channel(): DownstreamChannel | undefined;
  allowed(tool: string): boolean;
  /** The ready channel, connecting now if the server is down. */
  ensureChannel(): Promise<DownstreamChannel>;
  /** Drops the connection (its session expired) for the next request to make a new one. */
  drop(reason: string): Promise<void>;
  /** Why the connection closed, in words. */
  exitReason(): string;
  /** A call found the login gone: the server is marked failed until one is stored. */
  needsLogin(failure: AuthRequiredError): void;
}

/**
 * A server's calls: a tool call on the ready channel (no await before the request is written), retried
 * while that is safe, a session that expired renewed once, a failure translated into the PoolError the
 * caller gets, inside a CLIENT span when tracing; and its other requests.
 */
export class CallPath {
  readonly #host: CallHost;

  constructor(host: CallHost) {
    this.#host = host;
  }

  /**
   * Calls a tool. A failure before the request reached the server (refused connection, HTTP 502/503,
   * a process still restarting) is retried; after it was sent, only tools annotated read-only or idempotent are.
   */
  callTool(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<ToolResult> {
    return tracing() ? this.#tracedCall(tool, args, options) : this.#call(tool, args, options);
  }

  /** A call inside a CLIENT span (MCP semantic conventions), whose context the request carries to the server (`_meta`, and the HTTP header). */
  #tracedCall(tool: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<ToolResult> {
    const { spec } = this.#host;
    const transport = spec.transport.type;
    const version = this.#host.channel()?.protocolVersion;
    const attributes: Attributes = {
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": tool,
      "network.transport": transport === "stdio" ? "pipe" : "tcp",
      "codemux.server": this.#host.name,
      "codemux.transport": transport,
    };
    if (version !== undefined) {
      attributes["mcp.protocol.version"] = version;
      attributes["codemux.era"] = version >= "2026" ? "modern" : "legacy";
    }
    if (spec.transport.type !== "stdio") attributes["server.address"] = maskUrl(spec.transport.url);
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
    const host = this.#host;
    if (!host.allowed(tool)) return Promise.reject(new ToolNotFoundError(host.name, tool, toolFilterReason(host.spec.tools, tool), { denied: true }));
    host.inFlight.begin();
    const request: ChannelCall = {
      name: tool,
      arguments: args ?? {},
      timeoutMs: options.timeoutMs ?? host.spec.callTimeoutMs,
      onprogress: options.onprogress,
      signal: options.signal,
      clientCapabilities: relayable(options.clientCapabilities, host.options.relay?.capabilities),
      inputRequired: options.inputRequired,
      caller: options.session,
      traceMeta: options.traceMeta,
    };
    const channel = this.#readyChannel(options);
    if (channel === undefined) return this.#attempts(request, options);
    // The common case in one promise layer (no async frame, no catch in between): a failure goes on to the retries.
    return channel.callTool(request).then(this.#answered, (error: unknown) => this.#attempts(request, options, this.#recover(error, request, options)));
  }

  /** A call answered on its first attempt: the in-flight count goes down as in #attempts' finally. */
  readonly #answered = (result: ToolResult): ToolResult => {
    this.#host.inFlight.end();
    return result;
  };

  /** Tries until an answer or a failure not worth retrying; `first` is the first attempt when it was already made. */
  async #attempts(request: ChannelCall, options: CallOptions, first?: Promise<ToolResult>): Promise<ToolResult> {
    const host = this.#host;
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
        const delays = host.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
        const delay = delays[retries];
        const safeAfterSend = options.annotations?.readOnlyHint === true || options.annotations?.idempotentHint === true;
        if (delay === undefined || options.signal?.aborted || !retryable(failure, safeAfterSend)) throw failure;
        host.logger.info(`[${host.name}] ${request.name}: ${(failure as Error).message}; retry ${retries + 1} of ${delays.length} in ${delay} ms`);
        trace.getActiveSpan()?.addEvent("retry", { "codemux.attempt": retries + 2, "codemux.retry.delay_ms": delay, "error.type": (failure as Error).name });
        await abortableSleep(delay, options.signal).catch((reason: unknown) => {
          throw new CallCancelledError(host.name, request.name, { cause: reason });
        });
      }
    } finally {
      host.inFlight.end();
    }
  }

  /**
   * One request other than a tool call (`prompts/get`, `resources/read`, `completion/complete`), made for
   * `options.session` (connecting now if the server is down); no retries. Rejects with what the SDK raises.
   */
  async request(request: DownstreamRequest, options: CallOptions): Promise<Record<string, unknown>> {
    const host = this.#host;
    const channel = await host.ensureChannel();
    host.inFlight.begin();
    try {
      return await channel.request({
        ...request,
        timeoutMs: options.timeoutMs ?? host.spec.callTimeoutMs,
        signal: options.signal,
        clientCapabilities: relayable(options.clientCapabilities, host.options.relay?.capabilities),
        inputRequired: options.inputRequired,
        caller: options.session,
      });
    } finally {
      host.inFlight.end();
    }
  }

  /** The channel when the server is ready and the call not already cancelled (a cancelled one takes the slow path, which says so). */
  #readyChannel(options: CallOptions): DownstreamChannel | undefined {
    return this.#host.state() === "ready" && !options.signal?.aborted ? this.#host.channel() : undefined;
  }

  /** One attempt: on the ready channel at once (no await before the request is written), else after connecting. */
  #callOnce(request: ChannelCall, options: CallOptions): Promise<ToolResult> {
    const channel = this.#readyChannel(options);
    if (channel === undefined) return this.#connectAndCall(request, options);
    return channel.callTool(request).catch((error: unknown) => this.#recover(error, request, options));
  }

  async #connectAndCall(request: ChannelCall, options: CallOptions): Promise<ToolResult> {
    if (options.signal?.aborted) throw new CallCancelledError(this.#host.name, request.name);
    const channel = await this.#host.ensureChannel();
    return channel.callTool(request).catch((error: unknown) => this.#recover(error, request, options));
  }

  /** After a failed attempt: a Streamable HTTP server that restarted no longer knows our session, so a new one is started and the call sent once more. */
  async #recover(error: unknown, request: ChannelCall, options: CallOptions): Promise<ToolResult> {
    const host = this.#host;
    if (httpStatusOf(error) !== 404 || host.spec.transport.type !== "http") throw this.#translate(error, request, options);
    host.logger.info(`[${host.name}] session expired (HTTP 404); re-initializing`);
    await host.drop("the session expired");
    const fresh = await host.ensureChannel();
    return fresh.callTool(request).catch((e: unknown) => {
      throw this.#translate(e, request, options);
    });
  }

  /** The one translation of a channel's failure into the PoolError the caller gets; a failure only a login fixes also marks the server failed. */
  #translate(error: unknown, request: ChannelCall, options: CallOptions): Error {
    const host = this.#host;
    const failure = callError(error, {
      server: host.name,
      tool: request.name,
      timeoutMs: request.timeoutMs,
      cancelled: options.signal?.aborted === true,
      ready: host.state() === "ready",
      url: host.spec.transport.type === "stdio" ? "" : host.spec.transport.url,
      closedBecause: () => host.exitReason(),
    });
    if (AuthRequiredError.isInstance(failure)) host.needsLogin(failure);
    return failure;
  }
}
