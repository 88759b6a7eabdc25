import type { FastLane } from "@codemux/server";
import type { Server, Transport } from "@modelcontextprotocol/server";
import type { Identity } from "./auth/identity";
import { DrainingError, SessionLimitError, type SessionRefusal } from "./errors";

/** One MCP client session over HTTP: its transport, its SDK server, and who owns it. */
export interface HttpSession {
  id: string;
  kind: "streamable" | "sse";
  principal: string;
  transport: Transport;
  server: Server;
  createdAt: number;
  lastSeen: number;
  /** When the credential that opened it (or last used it) stops being accepted: the session is closed then. */
  expiresAt?: number;
  /** Requests in flight; a session is never expired while one is. Open streams are not counted: an idle session expires with them. */
  active: number;
  /** What the server lane has answered on this session (2025 era, lane on): for tests and diagnostics. */
  lane?: FastLane;
}

/** A new session owned by the request's principal, living no longer than its credential. */
export function newSession(fields: Pick<HttpSession, "id" | "kind" | "transport" | "server">, identity: Identity): HttpSession {
  const now = Date.now();
  return {
    ...fields,
    principal: identity.principal,
    ...(identity.expiresAt !== undefined ? { expiresAt: identity.expiresAt } : {}),
    createdAt: now,
    lastSeen: now,
    active: 0,
  };
}

/** How long shares bind after a principal within its share found every place taken. */
export const CONTENTION_MS = 60_000;

export interface SessionTableOptions {
  maxSessions: number;
  /** Sessions one principal may hold at most (open and being opened). */
  maxPerPrincipal: (principal: string) => number;
  /** Whether a principal may go past its share while no other principal waits (default: every one may). */
  borrows?: (principal: string) => boolean;
  idleMs: number;
  now?: () => number;
  onExpire?: (session: HttpSession) => void;
  onRefused?: (refusal: SessionRefusal) => void;
}

/**
 * The open MCP sessions, bounded in number (in all and per principal) and expired after an idle time.
 * A session belongs to the principal that opened it: a lookup by another principal finds nothing,
 * exactly like an unknown id.
 */
export class SessionTable {
  readonly #sessions = new Map<string, HttpSession>();
  readonly #options: Required<Omit<SessionTableOptions, "onExpire" | "onRefused">> & Pick<SessionTableOptions, "onExpire" | "onRefused">;
  /** Sessions being created (initialize in flight): they count against the limit before they have an id. */
  #reserved = 0;
  #draining = false;
  /** Until when shares bind: a principal within its share found the table full (see `reserve`). */
  #contendedUntil = Number.NEGATIVE_INFINITY;
  /** Sessions per principal, open or reserved. */
  readonly #held = new Map<string, number>();
  readonly #sweep: NodeJS.Timeout;

  constructor(options: SessionTableOptions) {
    this.#options = { now: Date.now, borrows: () => true, ...options };
    // At least every 5 s: a session whose credential expired must not outlive it by much.
    this.#sweep = setInterval(() => this.expire(), Math.max(50, Math.min(options.idleMs / 2, 5_000)));
    this.#sweep.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  count(kind: HttpSession["kind"]): number {
    let n = 0;
    for (const s of this.#sessions.values()) if (s.kind === kind) n++;
    return n;
  }

  /** Sessions `principal` holds (open and being opened). */
  held(principal: string): number {
    return this.#held.get(principal) ?? 0;
  }

  /**
   * Takes a place for a new session of `principal`; throws a `SessionLimitError` naming the limit
   * reached. Call `release` if the session is not added after all.
   *
   * Shares are work-conserving: a principal past its share may take a free place while no other
   * principal waits for one. When the table is full, a principal within its share takes the place
   * of the longest idle session (no request in flight) of a principal past its share; from then on,
   * for `CONTENTION_MS`, no principal goes past its share (they bind while another principal waits).
   */
  reserve(principal: string): void {
    if (this.#draining) throw new DrainingError("new MCP sessions");
    this.expire();
    const { maxSessions } = this.#options;
    const perPrincipal = this.#options.maxPerPrincipal(principal);
    const now = this.#options.now();
    const full = () => this.#sessions.size + this.#reserved >= maxSessions;
    const overShare = this.held(principal) >= perPrincipal;
    const borrows = this.#options.borrows(principal);
    let refusal: SessionRefusal | undefined;
    if (overShare && (!borrows || full() || now < this.#contendedUntil))
      // A principal whose limit is the whole table is told the table is full (capacity), not that it is past its share.
      refusal =
        full() && perPrincipal >= maxSessions
          ? { limit: "sessions", max: maxSessions }
          : { limit: "sessionsPerPrincipal", max: perPrincipal, principal, held: this.held(principal) };
    else if (full()) {
      // Another principal waits: shares bind for a while, and an idle borrowed place is taken back.
      this.#contendedUntil = now + CONTENTION_MS;
      if (overShare || !this.#reclaim()) refusal = { limit: "sessions", max: maxSessions };
    }
    if (refusal) {
      this.#options.onRefused?.(refusal);
      throw new SessionLimitError(refusal);
    }
    this.#reserved++;
    this.#hold(principal, 1);
  }

  /** Closes the longest idle session of a principal past its share; false when there is none. */
  #reclaim(): boolean {
    let oldest: HttpSession | undefined;
    for (const session of this.#sessions.values()) {
      if (session.active > 0 || this.held(session.principal) <= this.#options.maxPerPrincipal(session.principal)) continue;
      if (!oldest || session.lastSeen < oldest.lastSeen) oldest = session;
    }
    if (!oldest) return false;
    const reclaimed = oldest;
    this.#closeWhere((session) => session === reclaimed);
    return true;
  }

  /** From now on `reserve` refuses: the sessions already open go on until shutdown. */
  drain(): void {
    this.#draining = true;
  }

  /** Gives back a place `reserve` took for a session that was not added. */
  release(principal: string): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
    this.#hold(principal, -1);
  }

  /** Adds a session whose place was reserved. */
  add(session: HttpSession): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
    this.#sessions.set(session.id, session);
  }

  /**
   * The session with this id owned by `principal`, or undefined (unknown, expired, or another principal's).
   * `expiresAt` is the expiry of the credential of this request: the session now lives as long as it.
   */
  get(id: string, principal: string, expiresAt?: number): HttpSession | undefined {
    const session = this.#sessions.get(id);
    if (!session || session.principal !== principal) return undefined;
    if (expiresAt === undefined) delete session.expiresAt;
    else session.expiresAt = expiresAt;
    return session;
  }

  /** Closes every session of `principal` (its token was revoked). */
  closePrincipal(principal: string): void {
    this.#closeWhere((session) => session.principal === principal);
  }

  delete(id: string): void {
    const session = this.#sessions.get(id);
    if (!session) return;
    this.#sessions.delete(id);
    this.#hold(session.principal, -1);
  }

  #hold(principal: string, delta: number): void {
    const held = this.held(principal) + delta;
    if (held > 0) this.#held.set(principal, held);
    else this.#held.delete(principal);
  }

  /** Marks a client's use of the session without holding it open: an open stream is not use, so it does not keep an idle session alive. */
  touch(session: HttpSession): void {
    session.lastSeen = this.#options.now();
  }

  /** Marks a request on the session; the returned function marks its end. */
  begin(session: HttpSession): () => void {
    session.active++;
    session.lastSeen = this.#options.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      session.active--;
      session.lastSeen = this.#options.now();
    };
  }

  /** Closes sessions idle for longer than the idle time with nothing in flight, and those whose credential expired. */
  expire(): void {
    const now = this.#options.now();
    const cutoff = now - this.#options.idleMs;
    this.#closeWhere((session) => (session.active === 0 && session.lastSeen <= cutoff) || (session.expiresAt !== undefined && session.expiresAt <= now));
  }

  #closeWhere(ended: (session: HttpSession) => boolean): void {
    for (const session of [...this.#sessions.values()]) {
      if (!ended(session)) continue;
      this.delete(session.id);
      this.#options.onExpire?.(session);
      void session.transport.close().catch(() => undefined);
    }
  }

  all(): HttpSession[] {
    return [...this.#sessions.values()];
  }

  /** Closes every session (shutdown). */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweep);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    this.#held.clear();
    await Promise.all(sessions.map((s) => s.transport.close().catch(() => undefined)));
  }
}
