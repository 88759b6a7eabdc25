import { context, type Context } from "@opentelemetry/api";
import { CallCancelledError, inSpan, tracing, type CallerSession, type InstanceOwner, type RelayContext, type ServerRequestRelay } from "@codemux/pool";
import { ProtocolError, ProtocolErrorCode, type ClientCapabilities, type Root } from "@modelcontextprotocol/server";
import { LATE_REQUEST_WINDOW_MS } from "./defaults";
import { APPS_EXTENSION, APP_MIME_TYPE, type ListRootsResult, type SessionInfo, type ToolCallMiddleware } from "@codemux/core";

/** What each server-to-client question needs the client to have declared (roots are answered apart). */
const NEEDS: Record<string, keyof ClientCapabilities> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
};

export interface ClientRelayOptions {
  /** The roots a shared server is told when it asks (`roots/list`): its config entry's, else the core's root. */
  roots: (server: string) => Root[];
  /**
   * Whether one connection to `server` serves every principal (true when absent). An isolated server's
   * instances get their owner's roots and questions; its listing connection serves no client.
   */
  isShared?: (server: string) => boolean;
  /** Milliseconds since the epoch; `Date.now` when absent. */
  clock?: () => number;
}

/** One request in flight on a server (a tool call, a resource read, a prompt, a completion), as the relay counts it. */
interface Call {
  /** The caller's session as the request has it (a 2026-07-28 request's own, with its own peer). */
  readonly session: SessionInfo;
  readonly since: number;
  /** Its questions waiting for the client's answer (a parked call's waits for the retry): meanwhile it asks no other. */
  asking: number;
  /** Ends its turn on the server, while it holds one. */
  release: (() => void) | undefined;
  /** The call's trace context (with tracing on): a question it relays is a span of its trace. */
  trace?: Context | undefined;
}

/** One principal's queue of calls on one server: the end of the last one queued, and how many wait. */
interface Turns {
  tail: Promise<void>;
  waiting: number;
}

/** Who a request is made for, as `during` counts it. */
export interface RelayedCall {
  session: SessionInfo;
  /** What is called (a tool's name, `resources/read`, a prompt's name), for the error when the wait for a turn is cancelled. */
  name: string;
  signal?: AbortSignal | undefined;
}

/** Who a server's request or log line is for: one session, or why that cannot be known. */
export type Attribution = { session: SessionInfo } | { refused: string };

/** What `attribute` knows of a request besides its server: whose instance sent it, and the caller it named. */
export interface AttributionHints {
  owner?: InstanceOwner | undefined;
  caller?: CallerSession | undefined;
}

type Attributed = { call: Call | undefined; session: SessionInfo } | { refused: string };

/**
 * Routes what downstream servers send to "their client" (sampling, elicitation, roots requests, log
 * lines) to the client session whose call caused it, never to another principal's:
 * - a server that names the request it asks about (over Streamable HTTP, a question sent on that request's
 *   own stream; a 2026 server's task) is answered by that request's client, whatever else is in flight;
 * - else an isolated server's instance serves one owner (see `#owned`);
 * - a question that names no request goes to the one session with requests in flight on the server, when
 *   no other principal's request on it overlapped them or ended less than LATE_REQUEST_WINDOW_MS before
 *   them (the server may still be asking about it); it is refused otherwise. A request waiting for its
 *   client's answer (a parked 2026-07-28 call too) counts for none of this: it asks nothing meanwhile.
 * A shared server that asked such a question of a client that could answer it takes turns per principal
 * from then on: one principal's requests on it run one at a time (a request gives its turn back while it
 * waits for an answer), so its own later questions have one request to go to. Principals never wait for
 * each other. A shared server's roots come from the config, never from a client: one client must not
 * widen what the server may touch for others.
 */
export class ClientRelay implements ServerRequestRelay {
  // roots.listChanged: an isolated server's instance is told when its owner's roots change (never a shared server).
  // MCP Apps: codemux's own connection lists a server's tools for every host, so it declares the extension (at initialize, on 2025-11-25) to see
  // app tools a server offers only to hosts that render them; a call declares it only when its caller did (see relayable in the pool).
  readonly capabilities: ClientCapabilities = {
    sampling: {},
    elicitation: {},
    roots: { listChanged: true },
    extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } },
  };
  readonly #roots: (server: string) => Root[];
  readonly #isShared: (server: string) => boolean;
  readonly #clock: () => number;
  /** server -> its requests in flight */
  readonly #calls = new Map<string, Set<Call>>();
  /** server -> principal -> when its last request on the server ended */
  readonly #ended = new Map<string, Map<string, number>>();
  /** The connected MCP client sessions, oldest first. */
  readonly #sessions = new Map<string, SessionInfo>();
  /** Shared servers that asked a client that could answer, about a request they did not name: their requests take turns per principal. */
  readonly #askers = new Set<string>();
  /** `server\0principal` -> that principal's queue on the server */
  readonly #turns = new Map<string, Turns>();

  constructor(options: ClientRelayOptions) {
    this.#roots = options.roots;
    this.#isShared = options.isShared ?? (() => true);
    this.#clock = options.clock ?? Date.now;
  }

  /** Counts each call in flight (see `during`). */
  middleware(): ToolCallMiddleware {
    return (ctx, next) => this.during(ctx.entry.server, { session: ctx.session, name: ctx.entry.name, signal: ctx.signal }, () => next(ctx));
  }

  /**
   * Runs `work`, one request of `caller` on `server`, counted in flight while it runs (so that what the server
   * sends can be attributed), after its principal's turn on a server that takes turns.
   */
  async during<T>(server: string, caller: RelayedCall, work: () => Promise<T>): Promise<T> {
    const release = this.#askers.has(server)
      ? await (tracing() ? inSpan("wait for turn", { attributes: { "codemux.server": server } }, () => this.#turn(server, caller)) : this.#turn(server, caller))
      : undefined;
    const call: Call = { session: caller.session, since: this.#clock(), asking: 0, release };
    if (tracing()) call.trace = context.active();
    let calls = this.#calls.get(server);
    if (!calls) this.#calls.set(server, (calls = new Set()));
    calls.add(call);
    try {
      return await work();
    } finally {
      calls.delete(call);
      this.#markEnded(server, caller.session.principal);
      call.release?.();
    }
  }

  /** Makes a connected client session known (for its instances' roots and questions) until the returned function is called. */
  attach(session: SessionInfo): () => void {
    this.#sessions.set(session.id, session);
    // Stateless HTTP attaches one session id once per request: a request that ends leaves a later one's in place.
    return () => {
      if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
    };
  }

  /** The session a server's request or log line belongs to (from `owner`'s instance, or the caller it named, when given), or why none can be named. */
  attribute(server: string, hints: AttributionHints = {}): Attribution {
    const attributed = this.#attribute(server, hints);
    return "refused" in attributed ? attributed : { session: attributed.session };
  }

  async handle(
    server: string,
    request: { method: string; params?: Record<string, unknown> },
    { signal, owner, caller }: RelayContext,
  ): Promise<Record<string, unknown>> {
    if (request.method === "roots/list") {
      // The calling client when the instance asks during its owner's call (a 2026-07-28 one can be asked no other way).
      const during = owner ? this.#attribute(server, { owner, caller }) : undefined;
      const calling = during && !("refused" in during) && during.session.peer?.capabilities()?.roots ? during.session : undefined;
      const client = owner ? (calling ?? this.#rootsSession(owner))?.peer : undefined;
      // An instance is told its owner's roots when the owner's client has some; the config's otherwise, as a shared server is.
      return client ? ((await client.listRoots({ signal })) as Record<string, unknown>) : { roots: this.#roots(server) };
    }
    const attributed = this.#attribute(server, { owner, caller });
    if ("refused" in attributed) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `codemux refused ${request.method}: ${attributed.refused}.`);
    const peer = attributed.session.peer;
    if (!peer)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `codemux refused ${request.method}: ${server} sent it during a call with no MCP client to ask (a REST call or a job).`,
      );
    const capability = NEEDS[request.method];
    if (!capability || !peer.capabilities()?.[capability]) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `The client that called ${server} does not support ${request.method}; codemux cannot ask it.`);
    }
    // It asked a client that can answer, without naming the request: from now on its requests take turns per principal.
    if (!owner && caller === undefined && this.#isShared(server)) this.#askers.add(server);
    const { call } = attributed;
    // While it waits for the answer (a 2026-07-28 client's call parks until its retry), it neither holds its principal's turn nor counts as a cause.
    if (call) {
      call.asking++;
      call.release?.();
      call.release = undefined;
    }
    const params = (request.params ?? {}) as never;
    const ask = (): Promise<Record<string, unknown>> =>
      (request.method === "sampling/createMessage" ? peer.createMessage(params, { signal }) : peer.elicit(params, { signal })) as Promise<
        Record<string, unknown>
      >;
    try {
      return await (tracing()
        ? inSpan(`relay ${request.method}`, { attributes: { "codemux.server": server, "mcp.method.name": request.method }, parent: call?.trace }, ask)
        : ask());
    } finally {
      if (call) call.asking--;
    }
  }

  /** How many requests wait for their principal's turn on `server`. */
  waiting(server: string): number {
    let waiting = 0;
    for (const [key, turns] of this.#turns) if (key.startsWith(`${server}\0`)) waiting += turns.waiting;
    return waiting;
  }

  /** The roots a server is told when it asks during a call of `session`: a shared server its config's, an isolated one the caller's own when it has some. */
  rootsFor(server: string, session: SessionInfo, signal: AbortSignal): Promise<ListRootsResult> {
    const client = this.#isShared(server) ? undefined : session.peer;
    return client?.capabilities()?.roots ? client.listRoots({ signal }) : Promise.resolve({ roots: this.#roots(server) });
  }

  #attribute(server: string, { owner, caller }: AttributionHints): Attributed {
    if (caller !== undefined) {
      // The pool hands back the session the request was made with: the request itself, not one like it (an instance's, only its owner's).
      for (const call of this.#calls.get(server) ?? [])
        if (call.session === caller && (!owner || owner.principal === caller.principal)) return { call, session: call.session };
      return { refused: `${server} sent it about a request that has ended` };
    }
    if (owner) return this.#owned(server, owner);
    if (!this.#isShared(server)) return { refused: `${server} sent it on the connection that lists its tools, which serves no client` };
    const calls = this.#calls.get(server);
    const candidates = [...(calls ?? [])].filter((call) => call.asking === 0);
    if (candidates.length === 0)
      return { refused: calls?.size ? `${server} sent it while its calls in flight wait for their clients' answers` : `${server} sent it outside any call` };
    const picked = pick(server, candidates, "clients");
    if ("refused" in picked) return picked;
    let since = Number.POSITIVE_INFINITY;
    for (const call of candidates) since = Math.min(since, call.since);
    const cutoff = since - LATE_REQUEST_WINDOW_MS;
    for (const [principal, at] of this.#ended.get(server) ?? []) {
      if (principal !== picked.session.principal && at >= cutoff)
        return { refused: `${server} sent it just after another client's call on it ended, so it may be about that call` };
    }
    return picked;
  }

  /**
   * Who an instance's request is for: the one request of its owner (a session, or a principal's sessions)
   * in flight on it; a per-session instance's request outside any call goes to its session.
   */
  #owned(server: string, owner: InstanceOwner): Attributed {
    const candidates = [...(this.#calls.get(server) ?? [])].filter(
      (call) => call.asking === 0 && (owner.session === undefined ? call.session.principal === owner.principal : call.session.id === owner.session),
    );
    if (candidates.length > 0) return pick(server, candidates, "of its principal's clients");
    if (owner.session === undefined) return { refused: `${server} sent it outside any call` };
    const session = this.#sessions.get(owner.session);
    return session ? { call: undefined, session } : { refused: `${server} sent it after the session that owns it ended` };
  }

  /** The client session that tells an instance its roots: its owner session, or its principal's most recently connected session that has roots. */
  #rootsSession(owner: InstanceOwner): SessionInfo | undefined {
    if (owner.session !== undefined) {
      const session = this.#sessions.get(owner.session);
      return session?.peer?.capabilities()?.roots ? session : undefined;
    }
    let latest: SessionInfo | undefined;
    for (const session of this.#sessions.values()) if (session.principal === owner.principal && session.peer?.capabilities()?.roots) latest = session;
    return latest;
  }

  /** Waits for the call's turn among its principal's calls on `server` (or its cancellation); resolves with the function that ends the turn. */
  async #turn(server: string, caller: RelayedCall): Promise<() => void> {
    const key = `${server}\0${caller.session.principal}`;
    let turns = this.#turns.get(key);
    if (!turns) this.#turns.set(key, (turns = { tail: Promise.resolve(), waiting: 0 }));
    const previous = turns.tail;
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const mine = previous.then(() => ended);
    turns.tail = mine;
    turns.waiting++;
    const queue = turns;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      end();
      // The last one queued ends: the principal's queue is forgotten, so that the map holds only queues in use.
      if (queue.tail === mine && queue.waiting === 0 && this.#turns.get(key) === queue) this.#turns.delete(key);
    };
    try {
      await untilAborted(previous, caller.signal);
    } catch (reason) {
      // The turn passes on when the previous call ends, as if this call had run at once.
      void previous.then(release);
      throw new CallCancelledError(server, caller.name, { cause: reason });
    } finally {
      queue.waiting--;
    }
    return release;
  }

  /** Remembers when a principal's call on a server ended, dropping ends too old to matter to any call still in flight, so the map stays small. */
  #markEnded(server: string, principal: string): void {
    let ended = this.#ended.get(server);
    if (!ended) this.#ended.set(server, (ended = new Map()));
    const now = this.#clock();
    ended.delete(principal);
    ended.set(principal, now);
    if (ended.size === 1) return;
    let oldest = now;
    for (const { since } of this.#calls.get(server) ?? []) oldest = Math.min(oldest, since);
    // Insertion order is end order: the oldest come first.
    for (const [other, at] of ended) {
      if (at >= oldest - LATE_REQUEST_WINDOW_MS) break;
      ended.delete(other);
    }
  }
}

/**
 * The one session `candidates` (requests in flight, none waiting for an answer) belong to, or why there is
 * none: requests of two sessions, or two of one 2026-07-28 client (they share a session but not a peer).
 */
function pick(server: string, candidates: Call[], whose: string): Attributed {
  const [first] = candidates as [Call];
  const sessions = new Set(candidates.map((call) => call.session.id)).size;
  if (sessions > 1)
    return { refused: `${server} sent it while calls of ${sessions} ${whose} were in flight on it, so codemux cannot tell which client it is for` };
  if (candidates.length > 1 && first.session.peer?.era === "modern")
    return {
      refused: `${server} sent it while ${candidates.length} requests of one 2026-07-28 client were in flight on it, so codemux cannot tell which request it is for`,
    };
  return { call: first, session: first.session };
}

/** `done`, or a rejection with the signal's reason when it aborts first. */
function untilAborted(done: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return done;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    void done.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
