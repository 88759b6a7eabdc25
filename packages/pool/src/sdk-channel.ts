import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ChannelCall, DownstreamChannel, DownstreamNotification } from "./channel";

/** A request a server sends its client (sampling, elicitation, roots). */
export interface ServerRequest {
  method: string;
  params?: Record<string, unknown>;
}

export interface SdkChannelOptions {
  clientInfo: Implementation;
  /** Declared to the server; the sampling, elicitation and roots among them are answered by `onrequest`. */
  capabilities: ClientCapabilities;
  onrequest?: (request: ServerRequest, signal: AbortSignal) => Promise<Record<string, unknown>>;
  /** Logging messages, resource and prompt changes. */
  onnotification: (notification: DownstreamNotification) => void;
  ontoolschanged: () => void;
  /** The connection closed, from either side. */
  onclose: () => void;
}

const PASSED_ON = [
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ResourceListChangedNotificationSchema,
  PromptListChangedNotificationSchema,
];
const noProgress = () => undefined;

/** The SDK client as a channel: every request on the SDK's own path. Made before the transport, so that a close can reach a connection still starting. */
export class SdkChannel implements DownstreamChannel {
  readonly client: Client;

  constructor(options: SdkChannelOptions) {
    const client = new Client(options.clientInfo, { capabilities: options.capabilities });
    const { onrequest, capabilities } = options;
    if (onrequest) {
      const forward = (request: ServerRequest, extra: { signal: AbortSignal }) => onrequest(request, extra.signal);
      if (capabilities.sampling) client.setRequestHandler(CreateMessageRequestSchema, forward as never);
      if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, forward as never);
      if (capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, forward as never);
    }
    for (const schema of PASSED_ON) client.setNotificationHandler(schema, async (n) => options.onnotification(n as DownstreamNotification));
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => options.ontoolschanged());
    client.onclose = options.onclose;
    this.client = client;
  }

  connect(transport: Transport, timeoutMs: number): Promise<void> {
    return this.client.connect(transport, { timeout: timeoutMs });
  }

  get serverInfo(): Implementation | undefined {
    return this.client.getServerVersion();
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.client.getServerCapabilities();
  }

  callTool(call: ChannelCall): Promise<CallToolResult> {
    const signal = call.signal;
    const request = (requestSignal: AbortSignal | undefined) =>
      this.client.request({ method: "tools/call", params: { name: call.name, arguments: call.arguments } }, CallToolResultSchema, {
        timeout: call.timeoutMs,
        // Asking for progress (even when our caller did not) lets long calls that report it outlive the timeout.
        onprogress: call.onprogress ?? noProgress,
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

  async listTools(timeoutMs: number): Promise<Tool[]> {
    if (!this.capabilities?.tools) return [];
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
