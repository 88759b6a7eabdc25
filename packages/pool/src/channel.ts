import { isSwitchedOff, type ClientCapabilities, type DownstreamTaskHandling, type InputRound, type ToolResult } from "@codemux/core";
import type { Client, Implementation, Progress, ServerCapabilities, Tool } from "@modelcontextprotocol/client";

/** The environment variable that turns the stdio call lane off (`0`, `false` or `off`), unless `callLane` says otherwise. */
const CALL_LANE_VARIABLE = "CODEMUX_CALL_LANE";

/** The SDK client under a connection (SDK v2's `Client`), as `ServerPool.client()` hands it out: callers type it by this name, not the SDK's. */
export type DownstreamClient = Client;

/** A notification from a downstream server that codemux passes on (logging, resources, prompts). */
export interface DownstreamNotification {
  method: string;
  params?: Record<string, unknown>;
}

/** What every request a channel sends for a caller carries: the connection has already chosen the timeout. */
interface ChannelSend {
  /** Time without an answer (or, for a tool call, a progress notification) before the request ends with RequestTimeout. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** The calling client's capabilities, sent to a 2026-era server in the request's `_meta` (never to a 2025 one). */
  clientCapabilities?: ClientCapabilities | undefined;
  /**
   * Set when the caller answers a 2026 server's `input_required` itself: such an answer then comes back
   * as the result (never fulfilled by the channel), and a retry carries the round's answers and state.
   */
  inputRequired?: InputRound | undefined;
  /** Who the request is made for: a server request that comes on its own stream is relayed as this caller's (`RelayContext.caller`). */
  caller?: CallerSession | undefined;
  /** The W3C trace context (`traceparent`, `tracestate`) to send in the request's `_meta`, when the call is traced. */
  traceMeta?: Record<string, string> | undefined;
}

/** One `tools/call` as a channel sends it. */
export interface ChannelCall extends ChannelSend {
  name: string;
  arguments: Record<string, unknown>;
  onprogress?: ((progress: Progress) => void) | undefined;
  /** How a 2026 server's task answering the call is treated: absent, followed inside the call (`downstream-task.ts`). */
  downstreamTask?: DownstreamTaskHandling | undefined;
}

/** One request beyond tools that a caller makes of a server: `prompts/get`, `resources/read` or `completion/complete`. */
export interface DownstreamRequest {
  method: "prompts/get" | "resources/read" | "completion/complete";
  params: Record<string, unknown>;
}

/** A request beyond tools as a channel sends it. */
export interface ChannelRequest extends ChannelSend, DownstreamRequest {}

/** Who makes a call, as the pool needs it to pick an isolated server's instance. */
export interface CallerSession {
  id: string;
  principal: string;
}

/**
 * How a ready connection reaches its server, picked once per connection: the SDK client
 * (`sdk-channel.ts`), or on stdio the call lane in front of it (`lane-channel.ts`). A channel only
 * carries requests and rejects with what the SDK raises (an `SdkError`, a `ProtocolError`, a transport error); the
 * connection above it owns retries, the timeout's value and the translation into pool errors.
 */
export interface DownstreamChannel {
  readonly serverInfo: Implementation | undefined;
  readonly capabilities: ServerCapabilities | undefined;
  /** The protocol version the connection speaks. */
  readonly protocolVersion: string | undefined;
  /** The `ttlMs` of the last `tools/list` (a 2026 server's caching hint); undefined when it gave none. */
  readonly listTtlMs: number | undefined;
  /** What the last `tools/list` dropped from definitions that break the spec (a bad field, or a whole tool), one sentence each. */
  readonly toolProblems: string[];
  /** The SDK client under the channel, for what no channel method carries yet: resources, prompts, completions (`ServerPool.client()`). */
  readonly client: DownstreamClient;
  callTool(call: ChannelCall): Promise<ToolResult>;
  /** One request of `call.method`; a 2026 server's `input_required` comes back as the result when the caller answers it (`inputRequired`). */
  request(call: ChannelRequest): Promise<Record<string, unknown>>;
  /** Every page of `tools/list`; none when the server declares no tools. */
  listTools(timeoutMs: number): Promise<Tool[]>;
  close(): Promise<void>;
}

/** Whether stdio connections take the call lane: the `callLane` option when given, else on unless `CODEMUX_CALL_LANE` is `0`, `false` or `off`. */
export function callLaneEnabled(option: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  if (option !== undefined) return option;
  return !isSwitchedOff(env[CALL_LANE_VARIABLE]);
}
