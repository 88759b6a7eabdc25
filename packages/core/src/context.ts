import type { ClientPeer, DownstreamTaskHandling, InputResume, Progress, ToolResult } from "./mcp";
import type { CatalogEntry, ToolAnnotations } from "./tool";

export type { ClientPeer } from "./mcp";

/** Where a downstream call came from. Later surfaces (REST, jobs, dispatch) add their own. */
export type CallOrigin = "call_tool" | "execute_code" | "passthrough" | "rest" | "job" | "dispatch" | "cli" | "app" | (string & {});

/** Who is asking: one client connection, and the principal it authenticated as ("local" over stdio). */
export interface SessionInfo {
  /** Unique per client session; result handles and jobs belong to it. */
  id: string;
  /**
   * The authenticated identity, the same for every session of one user. Named by kind so that two
   * kinds never merge: `token:<name>` (a static token), `oauth:<issuer>#<subject>` (an OAuth access
   * token), `local` (the owner over stdio and the CLI), `anonymous` (HTTP without auth).
   */
  principal: string;
  /** Groups the principal belongs to (an OAuth token's group claim, a static token's `groups`): policies may match them. */
  groups?: readonly string[];
  /** The scopes granted to this session (an OAuth token's `scope`, a static token's `scopes`); rights such as `admin` need theirs. */
  scopes?: readonly string[];
  /** The connected client, when the session is an MCP connection (not the CLI or REST). */
  peer?: ClientPeer;
}

/** What every middleware of the call pipeline sees and may change (arguments) on its way to the server. */
export interface CallContext {
  /** The resolved tool: its names, server and definition. */
  readonly entry: CatalogEntry;
  /** The tool's annotations (hints from its server: read-only, destructive...), `{}` when it has none. */
  readonly annotations: ToolAnnotations;
  /** The arguments as they will be sent; a middleware may replace them before calling `next`. */
  arguments: Record<string, unknown>;
  readonly origin: CallOrigin;
  readonly session: SessionInfo;
  /** Aborted when the caller cancels; passed to the downstream request. */
  readonly signal: AbortSignal | undefined;
  /** Progress of this call, to pass on to whoever waits for it. */
  readonly progress: ((progress: Progress) => void) | undefined;
  /** Per-call timeout override (ms); the server's `callTimeoutMs` otherwise. */
  readonly timeoutMs: number | undefined;
  /** The background job this call belongs to, when it runs inside one. */
  readonly job: string | undefined;
  /** The id of the client request behind this call (a JSON-RPC id, or a front end's request id), to match logs. */
  readonly requestId: string | undefined;
  /** Free room for middleware to share facts about this call (a cache hit, a plugin's timing). */
  readonly state: Map<string, unknown>;
}

/** The rest of the chain after a middleware: call it to go on, or answer without it. */
export type NextCall = (ctx: CallContext) => Promise<ToolResult>;

/**
 * One step around every downstream call. Runs in order; may change `ctx.arguments`, answer without
 * calling `next` (a cache, a policy refusal), or look at and replace the result on the way back.
 *
 * @example
 * const timing: ToolCallMiddleware = async (ctx, next) => {
 *   const started = performance.now();
 *   try { return await next(ctx); } finally { log(`${ctx.entry.qualifiedName} ${performance.now() - started} ms`); }
 * };
 */
export type ToolCallMiddleware = (ctx: CallContext, next: NextCall) => Promise<ToolResult>;

/** Where a call's `state` names the policy rule that decided it (`CallContext.state`), for the audit log. */
export const POLICY_RULE_STATE = "codemux/policyRule";

/**
 * Set (true) in the `state` of the second pass of a call whose server answered with a task codemux took: the pass around
 * the task's result. The call was admitted at its first pass, so plugins' `beforeCall` (limits, refusals) is not run again.
 */
export const FOLLOWED_TASK_STATE = "codemux/followedTask";

/**
 * A middleware that also hears of calls refused before the chain runs (by a policy), so that it can
 * record them (the audit log); it must not answer or throw.
 */
export interface RefusalObserver {
  refused(ctx: CallContext, error: Error): void;
}

/** A call before its name is resolved: what a surface hands to the pipeline. */
export interface CallRequest {
  /** `server__tool` */
  name: string;
  arguments: unknown;
  origin: CallOrigin;
  session: SessionInfo;
  signal?: AbortSignal;
  /**
   * Ends the downstream request in place of `signal`, as long as the context's `signal` is still this
   * request's: one signal shared by many calls, which must abort as soon as `signal` does while the call
   * is pending. A snippet's calls share their run's (aborted when the run ends, as each call's own
   * signal is then), sparing each call an abort listener of its own on its signal, at microseconds apiece.
   */
  downstreamSignal?: AbortSignal;
  progress?: (progress: Progress) => void;
  timeoutMs?: number;
  requestId?: string;
  job?: string;
  /** The retry of an earlier call that answered `input_required`: the answers go to the downstream call of `resume.tool`. */
  resume?: InputResume;
  /** How a 2026-07-28 server's task answering this call is treated (absent: followed inside the call). */
  downstreamTask?: DownstreamTaskHandling;
}
