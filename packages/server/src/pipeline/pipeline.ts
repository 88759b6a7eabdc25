import {
  composeMiddleware,
  APP_ORIGIN,
  NO_MASK,
  FOLLOWED_TASK_STATE,
  POLICY_RULE_STATE,
  TokenBuckets,
  type RateBuckets,
  splitQualifiedName,
  type CatalogEntry,
  type ToolAnnotations,
  type Progress,
  type ToolResult,
  type CallContext,
  type CallOrigin,
  type CallRequest,
  type DownstreamTaskHandling,
  type InputResume,
  type InputRound,
  type NextCall,
  type RefusalObserver,
  type SecretMask,
  type SessionInfo,
  type ToolCallMiddleware,
} from "@codemux/core";
import { UnknownToolError, type Catalog } from "@codemux/catalog";
import { DEFAULT_CALL_TIMEOUT_MS, ServerUnavailableError, ToolNotFoundError, inSpan, tracing, type CallOptions, type DownstreamRequest } from "@codemux/pool";
import type { ReadResourceResult } from "@modelcontextprotocol/server";
import { MAX_TOOL_NAME_CHARS } from "../defaults";
import { BadRequestError, PolicyRateLimitedError, PolicyRefusedError, ResourceReadError } from "../errors";
import type { Access } from "../policy/access";
import type { Grant } from "../policy/policies";
import type { ToolPool } from "../tool-pool";
import { ArgumentValidator, omitNulls } from "../validation";
import { InputRounds, type AskingRequest, type InputRoundsOptions } from "../input-required";
import { downstreamRequestSpan, pipelineSpan } from "../tracing";
import { isResourceReadEntry, resourceAsToolResult, resourceReadEntry, toolResultAsResource } from "./resource-read";

/** One resource to read through the pipeline: whose, and for whom. */
export interface ResourceReadRequest {
  server: string;
  /** The URI as the server knows it. */
  uri: string;
  origin: CallOrigin;
  session: SessionInfo;
  signal?: AbortSignal;
  /** The client's retry of a read that answered `input_required`. */
  resume?: InputResume | undefined;
}

export interface ToolCallPipelineOptions {
  pool: ToolPool;
  catalog: Catalog;
  /** Runs in order around every call, after the built-in steps' name resolution and before argument validation. */
  middleware?: readonly ToolCallMiddleware[];
  /** Waits (bounded) for the server a call needs while it is still connecting; resolves at once otherwise. */
  waitForServer?: (server: string) => Promise<void>;
  /** Why the config denies a tool the catalog does not list (its `tools.deny`), or undefined. */
  deniedReason?: (server: string, tool: string) => string | undefined;
  /** The config's policies: every call is checked against its principal's grant before the middleware runs. */
  access?: Access;
  /** Milliseconds since the epoch, for the policies' calls per minute; `Date.now` when absent. */
  clock?: () => number;
  /**
   * Where the policies' calls per minute are counted: buckets every instance of a deployment shares (Redis),
   * so that the limit holds across them; this instance's memory when absent. A store that does not answer
   * fails the call (with its own sentence): a limit is never waived because it cannot be counted.
   */
  rateBuckets?: RateBuckets;
  /** How a 2026-era server's questions during a call are answered (roots, time); no roots and the default call timeout when absent. */
  inputRounds?: InputRoundsOptions;
  /** Masks the progress messages a server sends during a call (its result passes the middleware: the redact plugin's). */
  mask?: SecretMask;
}

const MINUTE_MS = 60_000;

/**
 * The one path every downstream call takes, from call_tool, execute_code, passthrough and any later
 * surface: resolve the name (bounded, with "server is down" for a down server's tools), then the
 * middleware chain, then the built-in argument validation, then the pool (timeouts, cancellation,
 * progress, reconnects). Result limiting is not here: it belongs to the surface that makes the answer.
 */
export class ToolCallPipeline {
  readonly #pool: ToolPool;
  readonly #catalog: Catalog;
  readonly #waitForServer: (server: string) => Promise<void>;
  readonly #deniedReason: (server: string, tool: string) => string | undefined;
  readonly #validator = new ArgumentValidator();
  readonly #access: Access | undefined;
  readonly #clock: () => number;
  readonly #perMinute: RateBuckets;
  readonly #inputRounds: InputRounds;
  readonly #mask: SecretMask | undefined;
  #chain: NextCall;
  #middleware: ToolCallMiddleware[];

  constructor(options: ToolCallPipelineOptions) {
    this.#pool = options.pool;
    this.#catalog = options.catalog;
    this.#waitForServer = options.waitForServer ?? (async () => undefined);
    this.#deniedReason = options.deniedReason ?? (() => undefined);
    this.#access = options.access;
    this.#clock = options.clock ?? Date.now;
    this.#perMinute = options.rateBuckets ?? new TokenBuckets();
    this.#inputRounds = new InputRounds(options.inputRounds ?? { roots: async () => ({ roots: [] }), timeoutMs: () => DEFAULT_CALL_TIMEOUT_MS });
    this.#middleware = [...(options.middleware ?? [])];
    this.#mask = options.mask;
    this.#chain = this.#compose();
  }

  /** Adds a middleware at the end of the chain (closest to the server), for every call from now on. */
  use(middleware: ToolCallMiddleware): void {
    this.#middleware.push(middleware);
    this.#chain = this.#compose();
  }

  /** Resolves `server__tool`; for a server that is down and has no tools listed, says why it is down, and for a tool the config denies, that it does. */
  async resolve(name: string): Promise<CatalogEntry> {
    if (name.length > MAX_TOOL_NAME_CHARS) {
      throw new BadRequestError(`No tool has a name of ${name.length} characters; names look like "server__tool".`, { hint: "findTools" });
    }
    const split = splitQualifiedName(name);
    const server = split?.server;
    if (server !== undefined && this.#catalog.entries(server).length === 0)
      await (tracing()
        ? inSpan("wait for server", { attributes: { "codemux.server": server } }, () => this.#waitForServer(server))
        : this.#waitForServer(server));
    try {
      return this.#catalog.resolve(name);
    } catch (error) {
      if (!UnknownToolError.isInstance(error) || !split) throw error;
      const denied = this.#deniedReason(split.server, split.tool);
      if (denied) throw new ToolNotFoundError(split.server, split.tool, denied, { denied: true });
      const down = unavailable(this.#pool, split.server);
      if (down) throw new ServerUnavailableError(down.server, this.#mask?.text(down.reason) ?? down.reason, { cause: error });
      throw error;
    }
  }

  /**
   * The result of a call whose server answered with a task that codemux took (`CallRequest.downstreamTask`): `follow`
   * runs it to its end, in place of the server call, inside the same middleware as a call (so a result is screened,
   * redacted and logged as any call's is). The policy was checked when the call was made.
   */
  async followed(request: CallRequest, follow: () => Promise<ToolResult>): Promise<ToolResult> {
    const entry = await this.resolve(request.name);
    const ctx = new PipelineContext(entry, request);
    ctx.state.set(FOLLOWED_TASK_STATE, true);
    return composeMiddleware(this.#middleware, () => follow())(ctx);
  }

  /** One downstream call, start to end. */
  call(request: CallRequest): Promise<ToolResult> {
    return tracing() ? pipelineSpan(request, () => this.#call(request)) : this.#call(request);
  }

  #call(request: CallRequest): Promise<ToolResult> {
    // Without policies this is all they cost: no grant.
    const grant = this.#access?.grant(request.session);
    // A tool only an app may call exists for a call whose origin is an app only: to any other it is a name that does not exist.
    const appOnly = request.origin === APP_ORIGIN ? this.#catalog.appTool(request.name) : undefined;
    if (appOnly !== undefined && grant === undefined) return this.#run(appOnly, request);
    if (grant !== undefined) return this.#callGranted(request, grant, appOnly);
    // The common case, a listed tool, resolves with one lookup and no wait (resolve copies the server's list to see if it must wait).
    const listed = request.name.length <= MAX_TOOL_NAME_CHARS ? this.#catalog.get(request.name) : undefined;
    if (listed === undefined) return this.resolve(request.name).then((entry) => this.#run(entry, request));
    try {
      return this.#run(listed, request);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #run(entry: CatalogEntry, request: CallRequest): Promise<ToolResult> {
    return this.#chain(new PipelineContext(entry, request));
  }

  /** A call under a policy: a tool the grant hides answers as one that does not exist; then read-only and calls per minute. */
  async #callGranted(request: CallRequest, grant: Grant, appOnly?: CatalogEntry): Promise<ToolResult> {
    const entry =
      appOnly !== undefined && grant.sees(appOnly.qualifiedName)
        ? appOnly
        : await this.#resolveGranted(request.name, grant, (hidden, error) => this.#refused(this.#grantedContext(hidden, request, grant), error));
    const ctx = this.#grantedContext(entry, request, grant);
    const refusal = await (tracing()
      ? inSpan("policy", { attributes: { "codemux.policy.rule": grant.rule } }, () => this.#policyRefusal(ctx, grant))
      : this.#policyRefusal(ctx, grant));
    if (refusal !== undefined) {
      this.#refused(ctx, refusal);
      throw refusal;
    }
    return this.#chain(ctx);
  }

  /** `resolve` as `session` sees the catalog: a tool its policy hides answers as one that does not exist (describing a tool over REST). */
  resolveFor(name: string, session: SessionInfo): Promise<CatalogEntry> {
    const grant = this.#access?.grant(session);
    return grant === undefined ? this.resolve(name) : this.#resolveGranted(name, grant);
  }

  /** Resolves as the grant sees the catalog; `hidden` hears of a tool that exists but the grant hides. */
  async #resolveGranted(name: string, grant: Grant, hidden?: (entry: CatalogEntry, error: Error) => void): Promise<CatalogEntry> {
    if (name.length > MAX_TOOL_NAME_CHARS) return this.resolve(name);
    let entry: CatalogEntry | undefined;
    try {
      entry = await this.resolve(name);
    } catch (error) {
      const split = splitQualifiedName(name);
      // That a server is down or denies a tool is news only to whom it shows the server; suggestions are made below, from what the grant shows.
      if (!UnknownToolError.isInstance(error) && split !== undefined && grant.seesServer(split.server)) throw error;
    }
    if (entry !== undefined && grant.sees(entry.qualifiedName)) return entry;
    try {
      return this.#catalog.resolve(name, (qualifiedName) => grant.sees(qualifiedName));
    } catch (error) {
      if (entry !== undefined) hidden?.(entry, error as Error);
      throw error;
    }
  }

  #grantedContext(entry: CatalogEntry, request: CallRequest, grant: Grant): PipelineContext {
    const ctx = new PipelineContext(entry, request);
    ctx.state.set(POLICY_RULE_STATE, grant.rule);
    return ctx;
  }

  /** Why the grant refuses a call to a tool it shows, or undefined; a call that passes is counted against its calls per minute. */
  async #policyRefusal(ctx: CallContext, grant: Grant): Promise<Error | undefined> {
    const name = ctx.entry.qualifiedName;
    const { principal } = ctx.session;
    if (grant.readOnly && ctx.annotations.readOnlyHint !== true) {
      return new PolicyRefusedError(
        `${name} is not marked read-only, and the policy rule "${grant.rule}" lets principal "${principal}" call read-only tools only, so it was not called. Use a read-only tool, or ask the gateway's admin to change the rule.`,
        grant.rule,
      );
    }
    if (grant.callsPerMinute === undefined) return undefined;
    // Named apart from the rate-limit plugin's buckets, which may share the store.
    const key = `policy\u0000${grant.rule}\u0000${principal}`;
    const rate = { capacity: grant.callsPerMinute, calls: grant.callsPerMinute, perMs: MINUTE_MS };
    const { waitMs } = await this.#perMinute.takeAll([{ key, rate }], this.#clock());
    if (waitMs > 0) {
      return new PolicyRateLimitedError(
        `Rate limited: the policy rule "${grant.rule}" allows principal "${principal}" ${grant.callsPerMinute} calls a minute. ${name} was not called; retry in ${Math.ceil(waitMs / 1000)} s.`,
        grant.rule,
        waitMs,
      );
    }
    return undefined;
  }

  /** Tells the middleware that records refusals (the audit log) of a call the policy refused before the chain. */
  #refused(ctx: CallContext, error: Error): void {
    for (const step of this.#middleware) {
      const observer = step as Partial<RefusalObserver>;
      if (typeof observer.refused === "function") observer.refused(ctx, error);
    }
  }

  /**
   * Reads one resource through the same middleware as a tool call (the guard, audit and redaction see it as
   * `<server>__resources/read` with `{ uri }` and its contents as embedded resources), then the server.
   */
  async readResource(request: ResourceReadRequest): Promise<ReadResourceResult> {
    // The front ends list only the servers a grant shows; this holds whatever the URI names.
    if (this.#access?.seesServer(request.session, request.server) === false)
      throw new ResourceReadError(request.uri, "no server offers it; resources/list shows what exists.");
    const entry = resourceReadEntry(request.server);
    const call: CallRequest = { name: entry.qualifiedName, arguments: { uri: request.uri }, origin: request.origin, session: request.session };
    if (request.signal) call.signal = request.signal;
    if (request.resume) call.resume = request.resume;
    return toolResultAsResource(await this.#chain(new PipelineContext(entry, call)), request.uri);
  }

  async #read(ctx: CallContext): Promise<ToolResult> {
    const options = this.#downstream(ctx);
    const request = { method: "resources/read" as const, params: { uri: String(ctx.arguments.uri) } };
    // A request of its own, never from SDK v2's client cache: a read is the resource as it is now (a plugin may cache it, by its own rules).
    const read = await this.#inputRounds.call(ctx, PipelineContext.resumed(ctx), (round) =>
      this.#send(ctx.entry.server, request, { ...options, inputRequired: round }),
    );
    return resourceAsToolResult(read as unknown as ReadResourceResult);
  }

  /**
   * A `prompts/get` or `completion/complete` made for `caller`, straight to the server (no middleware sees
   * it): a 2026 server's questions during it are answered as a call's are, by `caller`'s client.
   */
  request(
    server: string,
    request: { method: "prompts/get" | "completion/complete"; params: Record<string, unknown> },
    caller: PipelineRequest,
  ): Promise<Record<string, unknown>> {
    const asking: AskingRequest = {
      entry: { qualifiedName: caller.name, server },
      session: caller.session,
      origin: caller.origin,
      signal: caller.signal,
      timeoutMs: undefined,
    };
    const options: CallOptions = { session: caller.session, clientCapabilities: caller.session.peer?.capabilities() };
    if (caller.signal) options.signal = caller.signal;
    const first: InputRound = caller.resume?.tool === caller.name ? withoutTool(caller.resume) : {};
    return this.#inputRounds.call(asking, first, (round) => this.#send(server, request, { ...options, inputRequired: round }));
  }

  /** One request beyond tools, through the pool. */
  #send(server: string, request: DownstreamRequest, options: CallOptions): Promise<Record<string, unknown>> {
    const pool = this.#pool;
    if (!pool.request) return Promise.reject(new BadRequestError(`This pool offers tools only; it cannot answer ${request.method}.`));
    if (!tracing()) return pool.request(server, request, options);
    return downstreamRequestSpan(server, request, (traced) => (pool.request as NonNullable<ToolPool["request"]>)(server, traced, options));
  }

  /** What the pool is told with a call's downstream request: who makes it (an isolated server's instance, a question's client), its signal, progress and timeout. */
  #downstream(ctx: CallContext): CallOptions {
    // The pool retries transient failures of read-only and idempotent tools only.
    // The session picks an isolated server's instance; a shared server ignores it.
    // The caller's own capabilities: a 2026-era server is told them with each call (the pool never tells a 2025 one).
    const options: CallOptions = { annotations: ctx.annotations, session: ctx.session, clientCapabilities: ctx.session.peer?.capabilities() };
    const signal = PipelineContext.downstreamSignal(ctx);
    if (signal) options.signal = signal;
    if (ctx.progress) options.onprogress = maskedProgress(ctx.progress, this.#mask);
    if (ctx.timeoutMs !== undefined) options.timeoutMs = ctx.timeoutMs;
    return options;
  }

  #compose(): NextCall {
    const validate: ToolCallMiddleware = (ctx, next) => {
      ctx.arguments = omitNulls(ctx.entry.tool.inputSchema, ctx.arguments);
      this.#validator.validate(ctx.entry.qualifiedName, ctx.entry.tool.inputSchema, ctx.arguments);
      return next(ctx);
    };
    return composeMiddleware([...this.#middleware, validate], (ctx) => {
      if (isResourceReadEntry(ctx.entry)) return this.#read(ctx);
      const options = this.#downstream(ctx);
      const handling = PipelineContext.downstreamTask(ctx);
      if (handling !== undefined) options.downstreamTask = handling;
      // A 2026 server's questions are answered here, inside every middleware: none of them sees an input_required answer.
      return this.#inputRounds.call(ctx, PipelineContext.resumed(ctx), (round) =>
        this.#pool.callTool(ctx.entry.server, ctx.entry.name, ctx.arguments, { ...options, inputRequired: round }),
      );
    });
  }
}

/** A call's context as the pipeline makes it; it also knows the signal the downstream request takes. */
class PipelineContext implements CallContext {
  readonly annotations: ToolAnnotations;
  arguments: Record<string, unknown>;
  readonly origin: CallOrigin;
  readonly session: SessionInfo;
  readonly signal: AbortSignal | undefined;
  readonly progress: ((progress: Progress) => void) | undefined;
  readonly timeoutMs: number | undefined;
  readonly requestId: string | undefined;
  readonly job: string | undefined;
  readonly state = new Map<string, unknown>();
  readonly #requestSignal: AbortSignal | undefined;
  readonly #downstreamSignal: AbortSignal | undefined;
  readonly #resume: InputResume | undefined;
  readonly #downstreamTask: DownstreamTaskHandling | undefined;

  constructor(
    readonly entry: CatalogEntry,
    request: CallRequest,
  ) {
    this.annotations = entry.tool.annotations ?? {};
    this.arguments = (request.arguments ?? {}) as Record<string, unknown>;
    this.origin = request.origin;
    this.session = request.session;
    this.signal = request.signal;
    this.progress = request.progress;
    this.timeoutMs = request.timeoutMs;
    this.requestId = request.requestId;
    this.job = request.job;
    this.#requestSignal = request.signal;
    this.#downstreamSignal = request.signal === undefined ? undefined : request.downstreamSignal;
    this.#resume = request.resume;
    this.#downstreamTask = request.downstreamTask;
  }

  /** How the call treats a 2026 server's task: only the request's own context says (a context a middleware made follows it inside). */
  static downstreamTask(ctx: CallContext): DownstreamTaskHandling | undefined {
    return #downstreamTask in ctx ? ctx.#downstreamTask : undefined;
  }

  /** The round a call sends first: a client's retry's answers when they are for this call's tool, else none. */
  static resumed(ctx: CallContext): InputRound {
    const resume = #resume in ctx ? ctx.#resume : undefined;
    return resume?.tool === ctx.entry.qualifiedName ? withoutTool(resume) : {};
  }

  /**
   * The signal that ends the downstream request: the request's shared `downstreamSignal` while the
   * context still carries the request's own signal; the context's signal when a middleware passed on
   * another context or signal.
   */
  static downstreamSignal(ctx: CallContext): AbortSignal | undefined {
    if (#downstreamSignal in ctx && ctx.#downstreamSignal !== undefined && ctx.signal === ctx.#requestSignal) return ctx.#downstreamSignal;
    return ctx.signal;
  }
}

/** A progress sink that gets the server's messages masked (the sink itself when nothing masks: no closure on the hot path). */
function maskedProgress(sink: (progress: Progress) => void, mask: SecretMask | undefined): (progress: Progress) => void {
  if (!mask || mask === NO_MASK) return sink;
  return (progress) => sink(progress.message === undefined ? progress : { ...progress, message: mask.text(progress.message) });
}

/** A retry's round as it is sent downstream. */
function withoutTool(resume: InputResume): InputRound {
  const round: InputRound = {};
  if (resume.inputResponses !== undefined) round.inputResponses = resume.inputResponses;
  if (resume.requestState !== undefined) round.requestState = resume.requestState;
  return round;
}

/** Who a request beyond tools (a prompt, a completion) is made for. */
export interface PipelineRequest {
  /** What is asked for as the client names it (`server__prompt`): errors name it, and a retry's answers are for it. */
  name: string;
  session: SessionInfo;
  origin: CallOrigin;
  signal?: AbortSignal | undefined;
  /** The client's retry of a request that answered `input_required`. */
  resume?: InputResume | undefined;
}

/** Why a server's tools cannot be used now, or undefined when it is ready: the one place this is worked out. */
export function unavailable(pool: Pick<ToolPool, "status">, server: string): { server: string; reason: string } | undefined {
  const status = pool.status().find((s) => s.name === server);
  if (!status || status.state === "ready") return undefined;
  return { server, reason: status.error ?? `it is ${status.detail ?? status.state}` };
}
