import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/** One MCP client session over HTTP: its transport, its SDK server, and who owns it. */
export interface HttpSession {
  id: string;
  kind: "streamable" | "sse";
  principal: string;
  transport: Transport;
  server: Server;
  createdAt: number;
  lastSeen: number;
  /** Requests (and open streams) in flight; a session is never expired while one is open. */
  active: number;
}

export interface SessionTableOptions {
  maxSessions: number;
  idleMs: number;
  now?: () => number;
  onExpire?: (session: HttpSession) => void;
}

/**
 * The open MCP sessions, bounded in number and expired after an idle time. A session belongs to the
 * principal that opened it: a lookup by another principal finds nothing, exactly like an unknown id.
 */
export class SessionTable {
  readonly #sessions = new Map<string, HttpSession>();
  readonly #options: Required<Omit<SessionTableOptions, "onExpire">> & Pick<SessionTableOptions, "onExpire">;
  /** Sessions being created (initialize in flight): they count against the limit before they have an id. */
  #reserved = 0;
  readonly #sweep: NodeJS.Timeout;

  constructor(options: SessionTableOptions) {
    this.#options = { now: Date.now, ...options };
    this.#sweep = setInterval(() => this.expire(), Math.max(50, Math.min(options.idleMs / 2, 60_000)));
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

  /** Takes a place for a new session, or false at the limit. Call `release` if the session is not added after all. */
  reserve(): boolean {
    this.expire();
    if (this.#sessions.size + this.#reserved >= this.#options.maxSessions) return false;
    this.#reserved++;
    return true;
  }

  release(): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
  }

  /** Adds a session whose place was reserved. */
  add(session: HttpSession): void {
    this.release();
    this.#sessions.set(session.id, session);
  }

  /** The session with this id owned by `principal`, or undefined (unknown, expired, or another principal's). */
  get(id: string, principal: string): HttpSession | undefined {
    const session = this.#sessions.get(id);
    return session && session.principal === principal ? session : undefined;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
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

  /** Closes sessions idle for longer than the idle time with nothing in flight. */
  expire(): void {
    const cutoff = this.#options.now() - this.#options.idleMs;
    for (const session of [...this.#sessions.values()]) {
      if (session.active > 0 || session.lastSeen > cutoff) continue;
      this.#sessions.delete(session.id);
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
    await Promise.all(sessions.map((s) => s.transport.close().catch(() => undefined)));
  }
}
