import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Identity } from "../auth/identity";

/** One signed-in browser: who, its CSRF token, and when it ends. */
export interface UiSession {
  id: string;
  identity: Identity;
  csrf: string;
  expiresAt: number;
}

export interface UiSessionsOptions {
  /** How long a sign-in lasts; the token's own expiry ends it sooner. */
  ttlMs: number;
  /** Signed-in browsers at most; the oldest is signed out past it. */
  max: number;
  now?: () => number;
}

/**
 * The admin page's sign-ins, in memory: the cookie carries only a random id, never the token, and the
 * id means nothing after a restart, a sign-out, its expiry or its token's revocation.
 */
export class UiSessions {
  readonly #sessions = new Map<string, UiSession>();
  readonly #options: UiSessionsOptions;
  readonly #now: () => number;

  constructor(options: UiSessionsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  open(identity: Identity): UiSession {
    this.#sweep();
    // Map order is insertion order: the first key is the oldest sign-in.
    while (this.#sessions.size >= this.#options.max) this.#sessions.delete(this.#sessions.keys().next().value as string);
    const ttlEnd = this.#now() + this.#options.ttlMs;
    const session: UiSession = {
      id: randomBytes(32).toString("base64url"),
      identity,
      csrf: randomBytes(32).toString("base64url"),
      expiresAt: identity.expiresAt === undefined ? ttlEnd : Math.min(ttlEnd, identity.expiresAt),
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The live session of this id, or undefined (unknown, ended or expired). */
  get(id: string | undefined): UiSession | undefined {
    if (!id) return undefined;
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return session;
  }

  close(id: string): void {
    this.#sessions.delete(id);
  }

  /** Ends every sign-in of these principals (their token was revoked or changed). */
  closePrincipals(principals: readonly string[]): void {
    for (const [id, session] of this.#sessions) if (principals.includes(session.identity.principal)) this.#sessions.delete(id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [id, session] of this.#sessions) if (session.expiresAt <= now) this.#sessions.delete(id);
  }
}

/** Whether a presented CSRF token is the session's, compared in constant time. */
export function csrfMatches(session: UiSession, presented: string | undefined): boolean {
  if (typeof presented !== "string") return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}
