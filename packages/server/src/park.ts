import { instanceOfId, instanceScopedId, type ClientCapabilities, type ClientPeer, type InputRequest, type InputResume } from "@codemux/core";
import { ProtocolError, ProtocolErrorCode, type ServerContext } from "@modelcontextprotocol/server";
import { randomUUID } from "node:crypto";
import { MAX_PARKED_CALLS, MAX_PARKED_CALLS_PER_PRINCIPAL, MAX_PARKED_QUESTION_BYTES, PARKED_CALL_TTL_MS } from "./defaults";
import { InvalidRequestStateError } from "./errors";
import { asInvalidParams, checkedState, resumeFrom } from "./input-required";
import type { RequestStates, StateClaims } from "./signed-state";

/** A parked call's answer to its client: the question its 2025 server asked, under the key the retry answers. */
export interface ParkedQuestion {
  park: string;
  key: string;
  request: InputRequest;
}

/** A parked request's answer: a tool call's, a prompt's or a resource read's result. */
type Answer = Record<string, unknown>;

/** What one 2026-07-28 request gets of a call that may park: its result, or the question it parked on. */
export type ParkedOutcome = { result: Answer } | { question: ParkedQuestion };

export interface ParkedCallsOptions {
  ttlMs?: number;
  maxPerPrincipal?: number;
  max?: number;
  /** Names this process in each park's id (the instance id behind a load balancer), so that a retry that reaches another instance is routed or told where the call lives. */
  instance?: string;
}

/** Who makes a request that starts or resumes a call, and the signal that ends the request. */
interface Caller {
  principal: string;
  signal: AbortSignal;
}

/** The question a parked call waits on: what the server asked, and how to answer it. */
interface Pending {
  key: string;
  request: InputRequest;
  answer(value: Record<string, unknown>): void;
  fail(error: Error): void;
}

/** One call of a 2026-07-28 client that a 2025 server asked about mid-call: the live downstream call, kept for the retry. */
class Park {
  readonly abort = new AbortController();
  /** The live call (the whole request's work, from the surface down to the server). */
  call: Promise<Answer> | undefined;
  pending: Pending | undefined;
  rounds = 0;
  timer: NodeJS.Timeout | undefined;
  /** Settles when the call ends or its server asks; replaced for each wait. */
  #wake: (() => void) | undefined;

  constructor(
    readonly id: string,
    readonly principal: string,
  ) {}

  wake(): void {
    this.#wake?.();
  }

  /** The question it waits on, as its client is asked it. */
  question(): { question: ParkedQuestion } | undefined {
    return this.pending ? { question: { park: this.id, key: this.pending.key, request: this.pending.request } } : undefined;
  }

  /** The call's outcome or its next question, whichever comes first. */
  next(call: Promise<Answer>): Promise<ParkedOutcome> {
    const asked = new Promise<ParkedOutcome>((resolve) => {
      this.#wake = () => {
        const question = this.question();
        if (question) resolve(question);
      };
      this.wake();
    });
    return Promise.race([call.then((result) => ({ result })), asked]);
  }
}

/**
 * Calls of 2026-07-28 clients parked on a 2025 server's question. Such a server asks its client mid-call,
 * and a 2026-07-28 client cannot be asked: the request answers `input_required` at once while the
 * downstream call stays open here; the client's retry answers the question and waits for what comes
 * next (the result, or another question). Bounded per principal and in all, and in time: a park not
 * resumed in time answers its question with a cancel and cancels the call. Parks live in this process; a
 * retry that reaches another instance is forwarded here by the HTTP layer (on Redis), else refused there with a sentence saying so.
 */
export class ParkedCalls {
  readonly #parks = new Map<string, Park>();
  readonly #ttlMs: number;
  readonly #maxPerPrincipal: number;
  readonly #max: number;
  readonly instance: string;

  constructor(options: ParkedCallsOptions = {}) {
    this.#ttlMs = options.ttlMs ?? PARKED_CALL_TTL_MS;
    this.#maxPerPrincipal = options.maxPerPrincipal ?? MAX_PARKED_CALLS_PER_PRINCIPAL;
    this.#max = options.max ?? MAX_PARKED_CALLS;
    this.instance = options.instance ?? randomUUID().slice(0, 8);
  }

  /** How many calls are parked now. */
  get size(): number {
    return this.#parks.size;
  }

  /**
   * Runs a call of `caller.principal`, whose client is `caller.peer` (a 2026-07-28 one): `run` is given the peer
   * that parks on a question, and the signal that ends the call (the request's until the call parks, then the park's).
   */
  start(caller: Caller & { peer: ClientPeer }, run: (peer: ClientPeer, signal: AbortSignal) => Promise<Answer>): Promise<ParkedOutcome> {
    const park = new Park(instanceScopedId(this.instance, randomUUID()), caller.principal);
    return this.#wait(park, run(this.#parkingPeer(park, caller.peer), park.abort.signal), caller.signal);
  }

  /** Answers the question of the parked call `id` with the retry's `inputResponses` and waits for what comes next. */
  resume(caller: Caller, { id, inputResponses }: { id: string; inputResponses: Record<string, unknown> | undefined }): Promise<ParkedOutcome> {
    const instance = instanceOfId(id);
    if (instance !== undefined && instance !== this.instance)
      throw new InvalidRequestStateError(
        `the parked call lives on codemux instance ${instance}, not this one: send the retry there, or, if that instance is gone, call the tool again (the call ended with it)`,
      );
    const park = this.#parks.get(id);
    if (!park || park.principal !== caller.principal) throw new InvalidRequestStateError("the parked call it names ended or expired");
    const answer = park.pending ? inputResponses?.[park.pending.key] : undefined;
    // No answer to its question: the client is asked again, as a server asks again for a missing answer.
    const again = park.question();
    if (again && (typeof answer !== "object" || answer === null)) return Promise.resolve(again);
    clearTimeout(park.timer);
    this.#parks.delete(id);
    const pending = park.pending;
    park.pending = undefined;
    pending?.answer(answer as Record<string, unknown>);
    return this.#wait(park, park.call as Promise<Answer>, caller.signal);
  }

  /** Waits for the call or its next question; on a question the call is parked (the request's signal no longer ends it). */
  async #wait(park: Park, call: Promise<Answer>, signal: AbortSignal): Promise<ParkedOutcome> {
    park.call = call;
    const cancel = () => park.abort.abort(signal.reason);
    signal.addEventListener("abort", cancel, { once: true });
    try {
      const outcome = await park.next(call);
      if ("question" in outcome) this.#keep(park);
      return outcome;
    } finally {
      signal.removeEventListener("abort", cancel);
    }
  }

  /** Keeps a parked call until its retry, or until its time is up: then its question is answered with a cancel and the call cancelled. */
  #keep(park: Park): void {
    this.#parks.set(park.id, park);
    park.timer = setTimeout(() => this.#expire(park), this.#ttlMs);
    park.timer.unref();
  }

  #expire(park: Park): void {
    this.#parks.delete(park.id);
    const pending = park.pending;
    park.pending = undefined;
    if (pending?.request.method === "elicitation/create") pending.answer({ action: "cancel" });
    else pending?.fail(new ProtocolError(ProtocolErrorCode.InternalError, "The client did not answer in time; codemux cancelled the call."));
    park.abort.abort(new Error("The parked call expired: its client did not retry in time."));
  }

  /** The peer a parked call's server asks: each question parks the call (within the bounds) for the client's retry to answer. */
  #parkingPeer(park: Park, peer: ClientPeer): ClientPeer {
    const ask = (method: string, params: Record<string, unknown>) =>
      new Promise<Record<string, unknown>>((answer, fail) => {
        const refused = this.#refusal(park, { method, params, declared: peer.capabilities() });
        if (refused) return fail(new ProtocolError(ProtocolErrorCode.InvalidRequest, `codemux cannot ask the client ${method}: ${refused}.`));
        park.rounds++;
        park.pending = { key: `q${park.rounds}`, request: { method, params }, answer, fail };
        park.wake();
      });
    return {
      era: "modern",
      capabilities: () => peer.capabilities(),
      elicit: (params) => ask("elicitation/create", params) as never,
      createMessage: (params) => ask("sampling/createMessage", params) as never,
      // An isolated server's roots are its client's: a 2026-07-28 one is asked as it is asked anything else.
      listRoots: () => ask("roots/list", {}) as never,
    };
  }

  /** Why a question cannot park its call, or undefined when it can. */
  #refusal(
    park: Park,
    { method, params, declared }: { method: string; params: Record<string, unknown>; declared: ClientCapabilities | undefined },
  ): string | undefined {
    const capability = method === "elicitation/create" ? "elicitation" : method === "roots/list" ? "roots" : "sampling";
    if (!declared?.[capability]) return "the client did not declare it";
    if (park.pending) return "the call already waits on a question";
    if (this.#parks.size >= this.#max) return `${this.#max} calls already wait for their clients' answers`;
    let own = 0;
    for (const other of this.#parks.values()) if (other.principal === park.principal) own++;
    if (own >= this.#maxPerPrincipal) return `${this.#maxPerPrincipal} of this principal's calls already wait for answers`;
    // The size bound before the question is kept: it stays in memory until the retry or the expiry.
    if (JSON.stringify(params).length > MAX_PARKED_QUESTION_BYTES) return `the question is larger than ${MAX_PARKED_QUESTION_BYTES} bytes`;
    return undefined;
  }
}

/** One 2026-07-28 request that may park (tools/call, prompts/get, resources/read) as the session hands it over: who calls what, with which peer, in which request. */
export interface ParkingCall {
  parks: ParkedCalls;
  states: RequestStates;
  principal: string;
  /** What the client called (a tool's name, or a prompt or resource read by `prompts/get NAME`, `resources/read URI`): the state is good for a retry of it only. */
  tool: string;
  /** The downstream name (a passthrough tool, a prompt) that a retry without requestState sends its inputResponses to: a 2026 server may hand out none. */
  target?: string;
  peer: ClientPeer;
  ctx: ServerContext;
}

/** What `run` is given for one call: the peer that parks on a question, the signal that ends the call, a 2026 server's retry. */
export interface ParkingRun {
  peer: ClientPeer;
  signal: AbortSignal;
  resume?: InputResume;
}

/** What a 2026-07-28 request answers while a downstream server waits for its client: the question, and codemux's state for the retry. */
export interface InputRequiredUp {
  resultType: "input_required";
  inputRequests?: Record<string, InputRequest>;
  requestState: string;
}

/** A fresh run's resume: the answers and state a signed requestState names, or a retry's answers without state for its target. */
function resumeOf(claims: StateClaims | undefined, { target, ctx }: ParkingCall): { resume?: InputResume } {
  if (claims) return { resume: resumeFrom(claims, ctx) };
  const inputResponses = ctx.mcpReq.inputResponses;
  return target !== undefined && inputResponses !== undefined ? { resume: { tool: target, inputResponses } } : {};
}

/**
 * Answers a 2026-07-28 request that may ask (tools/call, prompts/get, resources/read): a fresh one runs
 * (parking when its 2025 server asks), a retry that echoes codemux's state resumes its parked call or
 * carries a 2026 server's answers; a parked question goes back as `input_required` with a signed state
 * naming the park.
 */
export async function callParking<R extends Answer>(call: ParkingCall, run: (own: ParkingRun) => Promise<R>): Promise<R | InputRequiredUp> {
  const { parks, states, principal, tool, peer, ctx } = call;
  const claims = checkedState(states, { principal, tool }, ctx);
  const signal = ctx.mcpReq.signal;
  const outcome = await (claims?.park !== undefined
    ? asInvalidParams(() => parks.resume({ principal, signal }, { id: claims.park as string, inputResponses: ctx.mcpReq.inputResponses }))
    : parks.start({ principal, peer, signal }, (own, ends) => run({ peer: own, signal: ends, ...resumeOf(claims, call) })));
  if ("result" in outcome) return outcome.result as R;
  const { key, request, park } = outcome.question;
  return { resultType: "input_required", inputRequests: { [key]: request }, requestState: states.seal(principal, { tool, park }) };
}
