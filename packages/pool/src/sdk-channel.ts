import {
  Client,
  SdkError,
  SdkErrorCode,
  type ClientCapabilities as SdkClientCapabilities,
  type Implementation,
  type NotificationMethod,
  type Progress,
  type ServerCapabilities,
  type Tool,
  type Transport,
} from "@modelcontextprotocol/client";
import type { ClientCapabilities, ToolResult } from "@codemux/core";
import type { ChannelCall, DownstreamChannel, DownstreamNotification } from "./channel";
import { MAX_TOOL_LIST_PAGES } from "./defaults";

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

const PASSED_ON: NotificationMethod[] = [
  "notifications/message",
  "notifications/resources/updated",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
];
const noProgress = () => undefined;

/**
 * The SDK client, with the checks of its negotiated era (through `_wireCodec`, the hook the SDK gives
 * subclasses) opened to the call lane, so that the lane accepts and refuses exactly what the request path does.
 */
export class ChannelClient extends Client {
  /** A `tools/call` result as the request path takes it: decoded, then validated; the SdkError the request path would raise when refused. */
  checkCallToolResult(raw: unknown): ToolResult | SdkError {
    const codec = this._wireCodec();
    const decoded = codec.decodeResult("tools/call", raw);
    if (decoded.kind === "invalid") return decoded.error;
    // Only a 2026-era server answers input_required; the lane runs on 2025 connections.
    if (decoded.kind !== "complete") return new SdkError(SdkErrorCode.UnsupportedResultType, `Unsupported result type '${decoded.kind}' for tools/call`);
    const checked = codec.validateResult("tools/call", decoded.result);
    // The 2025 codec has checked that structuredContent is an object.
    if (checked.ok) return checked.value as ToolResult;
    return new SdkError(
      SdkErrorCode.InvalidResult,
      `Invalid result for tools/call: ${checked.reason === "invalid" ? checked.message : "not-in-era: tools/call"}`,
    );
  }

  /** A progress notification's progress as the client's handler gets it; undefined for one it drops. */
  checkProgress(raw: unknown): Progress | undefined {
    const checked = this._wireCodec().validateNotification("notifications/progress", raw);
    if (!checked.ok) return undefined;
    const { progressToken: _, ...progress } = checked.value.params;
    return progress;
  }
}

/** The SDK client as a channel: every request on the SDK's own path. Made before the transport, so that a close can reach a connection still starting. */
export class SdkChannel implements DownstreamChannel {
  readonly client: ChannelClient;

  constructor(options: SdkChannelOptions) {
    // The relay's capabilities (core's open type) are plain JSON, as the SDK's narrower type wants.
    const declared = options.capabilities as SdkClientCapabilities;
    const client = new ChannelClient(options.clientInfo, {
      capabilities: declared,
      // Every server is spoken to in the 2025 era, as before SDK v2; probing for 2026 is a step of its own.
      versionNegotiation: { mode: "legacy" },
      // codemux's page bound, not the SDK's 64.
      listMaxPages: MAX_TOOL_LIST_PAGES,
    });
    const { onrequest, capabilities } = options;
    if (onrequest) {
      const forward = (request: ServerRequest, ctx: { mcpReq: { signal: AbortSignal } }) => onrequest(request, ctx.mcpReq.signal);
      if (capabilities.sampling) client.setRequestHandler("sampling/createMessage", forward as never);
      if (capabilities.elicitation) client.setRequestHandler("elicitation/create", forward as never);
      if (capabilities.roots) client.setRequestHandler("roots/list", forward as never);
    }
    for (const method of PASSED_ON) client.setNotificationHandler(method, async (n) => options.onnotification(n as DownstreamNotification));
    client.setNotificationHandler("notifications/tools/list_changed", async () => options.ontoolschanged());
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

  callTool(call: ChannelCall): Promise<ToolResult> {
    // v2 removes its abort listener once the request settles: the caller's signal (maybe shared by many calls) is given as it is.
    // The 2025 codec has checked that structuredContent is an object: the SDK's result is a ToolResult.
    return this.client.request(
      { method: "tools/call", params: { name: call.name, arguments: call.arguments } },
      {
        timeout: call.timeoutMs,
        // Asking for progress (even when our caller did not) lets long calls that report it outlive the timeout.
        onprogress: call.onprogress ?? noProgress,
        resetTimeoutOnProgress: true,
        ...(call.signal ? { signal: call.signal } : {}),
      },
    ) as Promise<ToolResult>;
  }

  async listTools(timeoutMs: number): Promise<Tool[]> {
    if (!this.capabilities?.tools) return [];
    // Every page, each within timeoutMs; never from the client's response cache, so a refresh sees the server's list of now.
    const { tools } = await this.client.listTools(undefined, { timeout: timeoutMs, cacheMode: "bypass" });
    return tools;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
