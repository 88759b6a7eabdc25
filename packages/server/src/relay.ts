import { CallCancelledError, type InstanceOwner, type RelayContext, type ServerRequestRelay } from "@codemux/pool";
import { ProtocolError, ProtocolErrorCode, type ClientCapabilities, type Root } from "@modelcontextprotocol/server";
import { LATE_REQUEST_WINDOW_MS } from "./defaults";
import type { CallContext, ListRootsResult, SessionInfo, ToolCallMiddleware } from "@codemux/core";

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

/** One client session's calls in flight on one server. */
interface InFlight {
  session: SessionInfo;
  calls: number;
  /** When the first of these calls began. */
  since: number;
}

/** One server's queue of calls: the end of the last one queued, how many wait, and the call whose turn it is. */
interface Turns {
  tail: Promise<void>;
  waiting: number;
  holder: { session: SessionInfo; release: () => void } | undefined;
}

/** Who a server's request or log line is for: one session, or why that cannot be known. */
export type Attribution = { session: SessionInfo } | { refused: string };

/**
 * Routes what downstream servers send to "their client" (sampling, elicitation, roots requests, log
 * lines) to the client session whose call caused it. One downstream connection serves many principals,
 * and a 2025-era request carries no mark of the call behind it, so codemux attributes it only when
 * that is certain enough never to cross principals: exactly one session has calls in flight on the
 * server, and no other principal's call on it ended during those calls or shortly before them (its
 * server may still be asking about it). Otherwise the request is refused. A shared server's roots come
 * from the config, never from a client: one client must not widen what the server may touch for others.
 * An isolated server's instance serves one owner: its requests go to that owner's session (see `#owned`).
 * A shared server that has asked once gets one call at a time from then on, so that its later questions
 * have one caller in flight to go to.
 */
export class ClientRelay implements ServerRequestRelay {
  // roots.listChanged: an isolated server's instance is told when its owner's roots change (never a shared server).
  readonly capabilities: ClientCapabilities = { sampling: {}, elicitation: {}, roots: { listChanged: true } };
  readonly #roots: (server: string) => Root[];
  readonly #isShared: (server: string) => boolean;
  readonly #clock: () => number;
  /** server -> session id -> its calls in flight */
  readonly #inflight = new Map<string, Map<string, InFlight>>();
  /** server -> principal -> when its last call on the server ended */
  readonly #ended = new Map<string, Map<string, number>>();
  /** The connected MCP client sessions, oldest first. */
  readonly #sessions = new Map<string, SessionInfo>();
  /** Shared servers that have asked a client something during a call (a 2025 server's question names no call). */
  readonly #askers = new Set<string>();
  /** server -> the end of its last queued call, and how many calls wait for their turn */
  readonly #turns = new Map<string, Turns>();

  constructor(options: ClientRelayOptions) {
    this.#roots = options.roots;
    this.#isShared = options.isShared ?? (() => true);
    this.#clock = options.clock ?? Date.now;
  }

  /** Counts each call in flight per server and session, and when each principal's last call ended, so what a server sends can be attributed. */
  middleware(): ToolCallMiddleware {
    return async (ctx, next) => {
      const server = ctx.entry.server;
      // A shared server that has asked gets one call at a time: its next question then has one caller to go to.
      const release = this.#askers.has(server) ? await this.#turn(server, ctx) : undefined;
      let sessions = this.#inflight.get(server);
      if (!sessions) this.#inflight.set(server, (sessions = new Map()));
      const own = sessions.get(ctx.session.id);
      if (own) own.calls++;
      else sessions.set(ctx.session.id, { session: ctx.session, calls: 1, since: this.#clock() });
      try {
        return await next(ctx);
      } finally {
        const entry = sessions.get(ctx.session.id);
        if (entry && --entry.calls === 0) sessions.delete(ctx.session.id);
        this.#markEnded(server, ctx.session.principal);
        release?.();
      }
    };
  }

  /** Makes a connected client session known (for its instances' roots and questions) until the returned function is called. */
  attach(session: SessionInfo): () => void {
    this.#sessions.set(session.id, session);
    // Stateless HTTP attaches one session id once per request: a request that ends leaves a later one's in place.
    return () => {
      if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
    };
  }

  /** The session a server's request or log line belongs to (from `owner`'s instance when given), or why none can be named. */
  attribute(server: string, owner?: InstanceOwner): Attribution {
    if (owner) return this.#owned(server, owner);
    if (!this.#isShared(server)) return { refused: `${server} sent it on the connection that lists its tools, which serves no client` };
    const callers = [...(this.#inflight.get(server)?.values() ?? [])];
    if (callers.length === 0) return { refused: `${server} sent it outside any call` };
    if (callers.length > 1)
      return { refused: `${server} sent it while calls of ${callers.length} clients were in flight on it, so codemux cannot tell which client it is for` };
    const [{ session, since, calls }] = callers as [InFlight];
    // A 2026-07-28 client's requests share their principal's session: each call has its own peer, so two cannot be told apart.
    if (calls > 1 && session.peer?.era === "modern")
      return {
        refused: `${server} sent it while ${calls} requests of one 2026-07-28 client were in flight on it, so codemux cannot tell which request it is for`,
      };
    const cutoff = since - LATE_REQUEST_WINDOW_MS;
    for (const [principal, at] of this.#ended.get(server) ?? []) {
      if (principal !== session.principal && at >= cutoff)
        return { refused: `${server} sent it just after another client's call on it ended, so it may be about that call` };
    }
    return { session };
  }

  async handle(
    server: string,
    request: { method: string; params?: Record<string, unknown> },
    { signal, owner }: RelayContext,
  ): Promise<Record<string, unknown>> {
    if (request.method === "roots/list") {
      const client = owner ? this.#rootsSession(owner)?.peer : undefined;
      // An instance is told its owner's roots when the owner's client has some; the config's otherwise, as a shared server is.
      return client ? ((await client.listRoots({ signal })) as Record<string, unknown>) : { roots: this.#roots(server) };
    }
    if (!owner && this.#isShared(server)) this.#askers.add(server);
    const attributed = this.attribute(server, owner);
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
    // A 2026-07-28 client's call parks on the question until its retry: the server's next caller need not wait that long.
    if (peer.era === "modern") this.#yieldTurn(server, attributed.session);
    const params = (request.params ?? {}) as never;
    switch (request.method) {
      case "sampling/createMessage":
        return (await peer.createMessage(params, { signal })) as Record<string, unknown>;
      default:
        return (await peer.elicit(params, { signal })) as Record<string, unknown>;
    }
  }

  /** How many calls wait for their turn on `server` (one that has asked gets one call at a time). */
  waiting(server: string): number {
    return this.#turns.get(server)?.waiting ?? 0;
  }

  /** Waits for the call's turn on `server` (or its cancellation); resolves with the function that ends the turn. */
  async #turn(server: string, ctx: CallContext): Promise<() => void> {
    let turns = this.#turns.get(server);
    if (!turns) this.#turns.set(server, (turns = { tail: Promise.resolve(), waiting: 0, holder: undefined }));
    const previous = turns.tail;
    let release!: () => void;
    const ended = new Promise<void>((resolve) => (release = resolve));
    turns.tail = previous.then(() => ended);
    turns.waiting++;
    try {
      await untilAborted(previous, ctx.signal);
    } catch (reason) {
      // The turn passes on when the previous call ends, as if this call had run at once.
      void previous.then(release);
      throw new CallCancelledError(server, ctx.entry.name, { cause: reason });
    } finally {
      turns.waiting--;
    }
    const holder = { session: ctx.session, release };
    turns.holder = holder;
    return () => {
      if (turns.holder === holder) turns.holder = undefined;
      release();
    };
  }

  /** Ends the turn of `session`'s call on `server` early: its call is parked (waiting on a 2026-07-28 client's retry), and must not hold the others up. */
  #yieldTurn(server: string, session: SessionInfo): void {
    const turns = this.#turns.get(server);
    if (turns?.holder?.session !== session) return;
    turns.holder.release();
    turns.holder = undefined;
  }

  /** The roots a server is told when it asks during a call of `session`: a shared server its config's, an isolated one the caller's own when it has some. */
  rootsFor(server: string, session: SessionInfo, signal: AbortSignal): Promise<ListRootsResult> {
    const client = this.#isShared(server) ? undefined : session.peer;
    return client?.capabilities()?.roots ? client.listRoots({ signal }) : Promise.resolve({ roots: this.#roots(server) });
  }

  /**
   * Who an instance's request is for: the session that owns it, or for a principal's instance the one
   * session of that principal with a call in flight on it (two at once cannot be told apart).
   */
  #owned(server: string, owner: InstanceOwner): Attribution {
    if (owner.session !== undefined) {
      const session = this.#sessions.get(owner.session) ?? this.#inflight.get(server)?.get(owner.session)?.session;
      return session ? { session } : { refused: `${server} sent it after the session that owns it ended` };
    }
    const callers = [...(this.#inflight.get(server)?.values() ?? [])].filter((c) => c.session.principal === owner.principal);
    if (callers.length === 1) return { session: (callers[0] as InFlight).session };
    if (callers.length === 0) return { refused: `${server} sent it outside any call` };
    return {
      refused: `${server} sent it while calls of ${callers.length} of its principal's clients were in flight on it, so codemux cannot tell which client it is for`,
    };
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

  /** Remembers when a principal's call on a server ended, dropping ends too old to matter to any call still in flight, so the map stays small. */
  #markEnded(server: string, principal: string): void {
    let ended = this.#ended.get(server);
    if (!ended) this.#ended.set(server, (ended = new Map()));
    const now = this.#clock();
    ended.delete(principal);
    ended.set(principal, now);
    if (ended.size === 1) return;
    let oldest = now;
    for (const { since } of this.#inflight.get(server)?.values() ?? []) oldest = Math.min(oldest, since);
    // Insertion order is end order: the oldest come first.
    for (const [other, at] of ended) {
      if (at >= oldest - LATE_REQUEST_WINDOW_MS) break;
      ended.delete(other);
    }
  }
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
