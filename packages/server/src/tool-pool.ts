import type { ToolDefinition, ToolResult } from "@codemux/core";
import type {
  CallerSession,
  CallOptions,
  DownstreamClient,
  DownstreamNotification,
  DownstreamRequest,
  InstanceOwner,
  LoginCallbacks,
  PoolUpdate,
  ServerSpec,
  ServerStatus,
} from "@codemux/pool";

/**
 * What the core needs of its downstream servers. `ServerPool` from @codemux/pool is the real one;
 * a test or an embedder may pass any object of this shape.
 */
export interface ToolPool {
  readonly names: string[];
  status(): ServerStatus[];
  /** Connects every server; resolves when each is ready or failed. Never rejects. */
  start(): Promise<void>;
  /** `options.signal` may be shared by many calls (a snippet run's, aborted when the run ends): an abort after a call settled must not touch it. */
  callTool(server: string, tool: string, args?: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>;
  on(event: "tools", listener: (server: string, tools: ToolDefinition[]) => void): unknown;
  on(event: "state", listener: (status: ServerStatus) => void): unknown;
  on(event: "removed", listener: (server: string) => void): unknown;
  /** `owner` is set when the notification came from an isolated server's instance (see `ServerSpec.isolation`). */
  on(event: "notification", listener: (server: string, notification: DownstreamNotification, owner?: InstanceOwner) => void): unknown;
  off(event: "state", listener: (status: ServerStatus) => void): unknown;
  close(): Promise<void>;
  /**
   * One request beyond tools (`prompts/get`, `resources/read`, `completion/complete`) made for `options.session`
   * (an isolated server's: on its own instance), as `ServerPool.request` makes it; a pool without it offers tools only.
   */
  request?(server: string, request: DownstreamRequest, options?: CallOptions): Promise<Record<string, unknown>>;
  /** One server's SDK client, for listing resources and prompts (an isolated server's: `session`'s own instance); a pool without it offers tools only. */
  client?(server: string, session?: CallerSession): Promise<DownstreamClient>;
  /** A client session's roots changed: its own instances of isolated servers are told (shared servers never are). */
  rootsChanged?(session: CallerSession): void;
  /** Ends what a client session owned (its instances of servers isolated per session); a pool without it has none. */
  closeSession?(session: string): Promise<void>;
  /** Forgets a principal: ends its own instances of isolated servers, deletes the folders they kept for it and its own logins; how many of each went. A pool without it keeps none. */
  forgetPrincipal?(principal: string): Promise<Record<string, number>>;
  /** Stops one server and starts it again from the same entry; a pool without it cannot restart one server. */
  restart?(server: string): Promise<void>;
  /** Applies a reloaded config's servers (unchanged ones keep their connection); a pool without it cannot reload. */
  update?(specs: readonly ServerSpec[]): Promise<PoolUpdate>;
  /** Sends per-principal logins' browsers back to codemux's public HTTP route (`undefined`: a loopback listener again); a pool without it has no such logins. */
  useLoginCallbacks?(callbacks: LoginCallbacks | undefined): void;
}
