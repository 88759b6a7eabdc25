import { randomUUID } from "node:crypto";
import type { CallOrigin, InputRequest, InputResume, InputRound, ListRootsResult, RequestContext, SecretMask, SessionInfo, ToolResult } from "@codemux/core";
import { DownstreamError } from "@codemux/pool";
import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, type ServerContext } from "@modelcontextprotocol/server";
import { MAX_INPUT_ROUNDS } from "./defaults";
import { InputNotAskedError, InputRequiredError, InvalidRequestStateError, type InputRequiredAnswer } from "./errors";
import type { RequestStates, StateClaims } from "./signed-state";

export interface InputRoundsOptions {
  /** What a server is told when it asks for roots during a call of `session` (the relay's rule: a shared server gets its config's). */
  roots(server: string, session: SessionInfo, signal: AbortSignal): Promise<ListRootsResult>;
  /** Whether a server is shared (not isolated): its roots are its config's, so a 2026-07-28 client is not asked for them. */
  isShared?(server: string): boolean;
  /** How long one call's questions may wait for their answers, all rounds together (the server's `callTimeoutMs`). */
  timeoutMs(server: string): number;
  /** Masks the questions' text before a client sees them (asked here, or passed up to a 2026-07-28 client). */
  mask?: SecretMask;
}

/** A request whose questions InputRounds answers: what was called on which server, for whom, within what (a CallContext is one). */
export interface AskingRequest {
  /** `qualifiedName` names what was called in errors (`server__tool`, `server__resources/read`, `server__prompt`). */
  readonly entry: { readonly qualifiedName: string; readonly server: string };
  readonly session: SessionInfo;
  readonly origin: CallOrigin;
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number | undefined;
}

/** Whether an answer is a 2026 server's `input_required` (questions to answer before a retry), of any request. */
const asksInput = (result: Record<string, unknown>): boolean => result.resultType === "input_required";

/**
 * Answers a 2026-era server's `input_required` in the call's own session, never through the SDK's
 * handlers (which know no call): a legacy client is asked each question (elicitation, sampling) on its
 * session and the call is retried with the answers and the server's state, at most MAX_INPUT_ROUNDS
 * rounds within the call's timeout. A 2026-07-28 client is not asked: the question goes back up as an
 * InputRequiredError (its own call answers `input_required`; a snippet may catch it). The same holds for
 * a prompt and a resource read, which 2026-07-28 lets ask too.
 */
export class InputRounds {
  readonly #options: InputRoundsOptions;

  constructor(options: InputRoundsOptions) {
    this.#options = options;
  }

  /** Sends the request's `first` round and answers the rounds that follow; `send` makes one downstream request. */
  call<R extends Record<string, unknown>>(ctx: AskingRequest, first: InputRound, send: (round: InputRound) => Promise<R>): Promise<R> {
    // The common answer is complete: no async frame of its own.
    return send(first).then((result) => (asksInput(result) ? this.#rounds(ctx, result, send) : result));
  }

  async #rounds<R extends Record<string, unknown>>(ctx: AskingRequest, result: R, send: (round: InputRound) => Promise<R>): Promise<R> {
    const tool = ctx.entry.qualifiedName;
    const deadline = AbortSignal.timeout(ctx.timeoutMs ?? this.#options.timeoutMs(ctx.entry.server));
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, deadline]) : deadline;
    for (let round = 1; asksInput(result); round++) {
      const { mask } = this.#options;
      const answer = result as InputRequiredAnswer;
      const asked = mask && answer.inputRequests !== undefined ? { ...answer, inputRequests: mask.value(answer.inputRequests) } : answer;
      // A shared server's roots are its config's, never a client's: a round asking only for them is answered here, in every era.
      if (ctx.session.peer?.era === "modern" && !this.#rootsOnly(ctx.entry.server, asked)) throw new InputRequiredError(tool, asked);
      if (round > MAX_INPUT_ROUNDS) throw new InputNotAskedError(tool, `it asked more than ${MAX_INPUT_ROUNDS} rounds of questions`);
      const questions = Object.entries(asked.inputRequests ?? {});
      const answers = await Promise.all(questions.map(async ([key, question]) => [key, await this.#ask(ctx, question, signal)] as const)).catch(
        (error: unknown) => {
          if (deadline.aborted) throw new InputNotAskedError(tool, "its questions were not answered within the call's timeout");
          throw error;
        },
      );
      const next: InputRound = {};
      if (answers.length > 0) next.inputResponses = Object.fromEntries(answers);
      if (asked.requestState !== undefined) next.requestState = asked.requestState;
      result = await send(next);
    }
    return result;
  }

  #rootsOnly(server: string, asked: InputRequiredAnswer): boolean {
    const questions = Object.values(asked.inputRequests ?? {});
    return this.#options.isShared?.(server) === true && questions.length > 0 && questions.every((q) => q.method === "roots/list");
  }

  /** One question, asked of the calling client (roots: by the relay's rule); the SDK refuses what the client did not declare. */
  #ask(ctx: AskingRequest, question: InputRequest, signal: AbortSignal): Promise<unknown> {
    const tool = ctx.entry.qualifiedName;
    if (question.method === "roots/list") return this.#options.roots(ctx.entry.server, ctx.session, signal);
    const peer = ctx.session.peer;
    if (!peer) return Promise.reject(new InputNotAskedError(tool, `the call came from no MCP client to ask (${ctx.origin})`));
    const params = question.params ?? {};
    switch (question.method) {
      case "elicitation/create":
        return peer.elicit(withElicitationId(params), { signal });
      case "sampling/createMessage":
        return peer.createMessage(params, { signal });
      default:
        return Promise.reject(new InputNotAskedError(tool, `it asked "${String(question.method).slice(0, 60)}", which is no question a client answers`));
    }
  }
}

/** 2025-11-25 requires an `elicitationId` on a URL-mode elicitation and 2026-07-28 dropped it: a legacy client gets a new one (as SDK v2's own shim makes). */
function withElicitationId(params: Record<string, unknown>): Record<string, unknown> {
  return params.mode === "url" && typeof params.elicitationId !== "string" ? { ...params, elicitationId: randomUUID() } : params;
}

/** Who a call that ended in an InputRequiredError was made by: the tool the client called and its request. */
export interface PassUp {
  /** The tool the client called (`call_tool`, or a passthrough name): the state is good for a retry of that tool only. */
  tool: string;
  request: RequestContext;
  states: RequestStates;
}

/**
 * The `input_required` answer a 2026-07-28 client gets for its own call when a downstream server asked
 * during it: the server's questions as they came, and its state inside codemux's signed envelope (bound
 * to the principal, the tool called and the downstream tool). Undefined for any other failure.
 */
export function passedUp(error: unknown, { tool, request, states }: PassUp): ToolResult | undefined {
  if (request.session.peer?.era !== "modern") return undefined;
  const answer = questionsOf(error, { principal: request.session.principal, key: tool, states });
  return answer && { content: [], ...answer };
}

/**
 * A 2026 server's refusal of a request for a client capability the client did not declare (`-32021`),
 * rethrown for a 2026-07-28 client's own call as that JSON-RPC error (HTTP 400), as if codemux refused
 * it: the client learns what to declare. Any other error, or another era's client, returns undefined.
 */
export function missingCapabilityUp(error: unknown, request: RequestContext): undefined {
  if (request.session.peer?.era !== "modern" || !DownstreamError.isInstance(error) || error.rpcCode !== ProtocolErrorCode.MissingRequiredClientCapability)
    return undefined;
  const data = error.cause instanceof ProtocolError ? (error.cause.data as { requiredCapabilities?: unknown } | undefined) : undefined;
  const required = data?.requiredCapabilities;
  throw new MissingRequiredClientCapabilityError(
    { requiredCapabilities: typeof required === "object" && required !== null && !Array.isArray(required) ? (required as Record<string, object>) : {} },
    error.message,
  );
}

/**
 * A downstream server's questions (an InputRequiredError) as the `input_required` answer to the client's
 * request `key` of `principal`: its state in codemux's signed envelope. Undefined for any other error.
 */
export function questionsOf(
  error: unknown,
  { principal, key, states }: { principal: string; key: string; states: RequestStates },
): { resultType: "input_required"; inputRequests?: Record<string, InputRequest>; requestState: string } | undefined {
  if (!InputRequiredError.isInstance(error)) return undefined;
  const { inputRequests, requestState } = error.result;
  const state = states.seal(principal, { tool: key, target: error.tool, ...(requestState === undefined ? {} : { state: requestState }) });
  return { resultType: "input_required", ...(inputRequests ? { inputRequests } : {}), requestState: state };
}

/**
 * The claims of the requestState a 2026-07-28 request echoes, once checked (codemux's, for this
 * principal and tool, not expired); undefined when it echoes none. A state that fails the check is
 * refused with -32602 and the reason.
 */
export function checkedState(states: RequestStates, call: { principal: string; tool: string }, ctx: ServerContext): StateClaims | undefined {
  const state = ctx.mcpReq.requestState();
  if (state === undefined) return undefined;
  if (typeof state !== "string") throw new ProtocolError(ProtocolErrorCode.InvalidParams, "requestState must be the string codemux handed out.");
  return asInvalidParams(() => states.open(call.principal, call.tool, state));
}

/** The retry of a call that passed a 2026 server's input_required up: its answers, for the downstream tool and state the claims name. */
export function resumeFrom(claims: StateClaims, ctx: ServerContext): InputResume {
  const resume: InputResume = { tool: claims.target ?? "" };
  if (ctx.mcpReq.inputResponses !== undefined) resume.inputResponses = ctx.mcpReq.inputResponses;
  if (claims.state !== undefined) resume.requestState = claims.state;
  return resume;
}

/** `work`'s value; a refused requestState becomes the JSON-RPC error -32602 with its sentence. */
export function asInvalidParams<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (InvalidRequestStateError.isInstance(error)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    throw error;
  }
}
