import type { Logger, MetaTool, RateBuckets, RecordTable, SharedLists, Store, SessionInfo, ToolAnnotations, ToolDefinition, ToolResult } from "@codemux/core";

/** The hints a server gives about a tool (MCP `ToolAnnotations`, core's type); `{}` when it gave none. */
export type ToolHints = ToolAnnotations;

/** A tool's definition as its server lists it (the part plugins read: pin hashes it whole); schemas as any server sends them. */
export interface ToolInfo extends Pick<ToolDefinition, "name" | "title" | "description" | "annotations"> {
  inputSchema?: unknown;
  outputSchema?: unknown;
  [key: string]: unknown;
}

/** Who made the call: the session, its principal, and its client when it is an MCP connection. */
export type CallSession = SessionInfo;

/** What a plugin sees of one tool call. Only `arguments` changes, and only through `beforeCall`'s answer. */
export interface PluginCall {
  /** Unique per call; ties a plugin's log lines together. */
  readonly id: string;
  /** `server__tool` */
  readonly name: string;
  readonly server: string;
  /** The server's own tool name. */
  readonly tool: string;
  /** The tool's definition, when known (always in codemux; from the server's tools/list with wrapWithProxy). */
  readonly definition: ToolInfo | undefined;
  readonly annotations: ToolHints;
  /** The arguments as they stand when this hook runs (after earlier plugins' changes). */
  readonly arguments: Record<string, unknown>;
  /** Where the call came from: call_tool, execute_code, passthrough, rest, job, dispatch, cli... */
  readonly origin: string;
  readonly session: CallSession;
  /** Same as `session.principal`. */
  readonly principal: string;
  readonly signal: AbortSignal | undefined;
  /** Milliseconds since the epoch (the plugin host's clock) when the chain started. */
  readonly startedAt: number;
  /** Scratch room shared by every plugin for this one call. */
  readonly state: Map<string, unknown>;
  /** Adds a field to this call's log record (the HTTP request log, `onCall` of the observability hooks). */
  logField(name: string, value: string | number | boolean): void;
}

/** What `beforeCall` may answer; `undefined` is the same as `{ action: "continue" }`. */
export type BeforeCallResult =
  | { action: "continue"; arguments?: Record<string, unknown> }
  | { action: "respond"; result: ToolResult }
  | { action: "abort"; error: string | Error };

type MaybePromise<T> = T | Promise<T>;

/** Counters for `/metrics`; the HTTP package provides one, and without it nothing is counted. */
export interface PluginMetrics {
  increment(name: string, labels?: Record<string, string>, value?: number): void;
}

/** One finished call as the plugin host saw it, for a request log. */
export interface CallRecord {
  id: string;
  name: string;
  origin: string;
  sessionId: string;
  principal: string;
  durationMs: number;
  outcome: "ok" | "tool_error" | "error";
  /** Fields the plugins added with `call.logField`. */
  fields: Record<string, string | number | boolean>;
}

/** How plugins reach the host's metrics and request log (see README "Observability"). */
export interface Observability {
  metrics?: PluginMetrics;
  /** Called once per finished call with the fields plugins added; never throws into the call. */
  onCall?(record: CallRecord): void;
}

/** Given to every plugin's `init`: where to log, where to keep files, and the host's observability. */
export interface PluginInitContext {
  /** stderr only: stdout is the MCP stream over stdio. */
  logger: Logger;
  /** codemux's own folder (`$CODEMUX_HOME`, `~/.codemux`): default home of audit logs and pins. */
  dataDir: string;
  /** The folder of the config file, for relative paths in options. */
  configDir: string;
  /** Milliseconds since the epoch. */
  clock: () => number;
  /** Counters; forwards to whatever the host attaches later, so keep the object, not its methods' absence. */
  metrics: PluginMetrics;
  /** Where a large result can be kept for read_result (codemux's result store), when the host has one. */
  results?: ResultKeeper;
  /** Token buckets shared by every instance of a deployment (Redis); the rate-limit plugin keeps its own in memory without them. */
  rateBuckets?: RateBuckets;
  /** A store shared by every instance (Redis): the cache plugin keeps its entries there, so one instance's answer serves the others. */
  sharedStore?: Store;
  /** Pin records shared by every instance (Redis): the pin plugin keeps pins and approvals there instead of its pin file. */
  pinRecords?: RecordTable;
  /** Lists shared by every instance (Redis): the memory plugin keeps each principal's memories there instead of its files. */
  sharedLists?: SharedLists;
  /** How long a principal's lines of this kind are kept (the config's `retention`); undefined: no limit. */
  retentionMs?: (kind: "audit", principal: string) => number | undefined;
}

/** codemux's `ResultStore` fits this: a handle read_result can page, readable only by its owner (the session). */
export interface ResultKeeper {
  /** `owner` is the session that alone may read it, and its principal (whose retention applies). */
  keep(tool: string, text: string, owner: { id: string; principal: string }): Promise<{ handle: string; bytes: number }>;
}

/**
 * A plugin: policy or convenience around every tool call. Every member but `name` is optional.
 * Before-hooks run by `priority`, highest first; after-hooks in reverse (an onion).
 */
export interface Plugin {
  name: string;
  /** Higher runs earlier on the way in and later on the way out; default 100. */
  priority?: number;
  /** When the plugin throws or times out: false (default) logs and goes on; true stops the call. */
  failClosed?: boolean;
  /** Time budget of each hook invocation; default 5000 ms. */
  timeoutMs?: number;
  init?(ctx: PluginInitContext): MaybePromise<void>;
  close?(): MaybePromise<void>;
  /** Deletes what the plugin keeps for `principal` (`codemux forget`); resolves with how many items went. */
  forget?(principal: string): MaybePromise<number>;
  /** Tools the plugin offers the model (memory's `memory`); a host lists them beside its own meta-tools. */
  readonly metaTools?: readonly MetaTool[];
  beforeCall?(call: PluginCall): MaybePromise<BeforeCallResult | void>;
  /** May return a replacement result; `undefined` keeps it. Runs on short-circuited results too. */
  afterCall?(call: PluginCall, result: ToolResult): MaybePromise<ToolResult | void>;
  /**
   * The call threw (or an inner plugin refused it); may return a result to answer instead, or an error to
   * throw in its place (the same failure told differently, e.g. with secrets masked).
   */
  onError?(call: PluginCall, error: unknown): MaybePromise<ToolResult | Error | void>;
  /** The host refused the call before any plugin ran (a policy's refusal); only to record it (audit), never to answer. */
  onRefused?(call: PluginCall, error: Error): void;
}
