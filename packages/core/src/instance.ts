/** An instance id: what 2025-era session ids and parked calls' states start with, so a load balancer can route on it. */
export const INSTANCE_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;

/** A session id (or signed state) of instance `instanceId`: `<instanceId>.<rest>`. */
export function instanceScopedId(instanceId: string, rest: string): string {
  return `${instanceId}.${rest}`;
}

/** The instance a session id or signed state belongs to, or undefined when it names none (ids of a single instance). */
export function instanceOfId(id: string): string | undefined {
  const dot = id.indexOf(".");
  if (dot <= 0) return undefined;
  const instance = id.slice(0, dot);
  return INSTANCE_ID_PATTERN.test(instance) ? instance : undefined;
}

/** Where the other instances of one deployment are: registered in shared state, each while it lives. */
export interface InstanceDirectory {
  /** This instance's id. */
  readonly self: string;
  /** The base URL (`http://10.0.0.5:3920`) of a live instance, or undefined when it is gone. */
  addressOf(instanceId: string): Promise<string | undefined>;
}

/** The state of the shared store as readiness and metrics show it. */
export interface SharedStateHealth {
  /** What it is, for people: `redis`. */
  readonly kind: string;
  /** Where it is, credentials removed: `redis://10.0.0.9:6379/0`. */
  readonly where: string;
  /** True while commands reach it. */
  up(): boolean;
}

/** The code a shared store's error carries when the store did not answer (down, unreachable, too slow). */
export const SHARED_STATE_DOWN = "REDIS_UNAVAILABLE";

/** True for the error a shared store raises when it did not answer: callers that can go on without it do. */
export function isSharedStateDown(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === SHARED_STATE_DOWN && error instanceof Error;
}
