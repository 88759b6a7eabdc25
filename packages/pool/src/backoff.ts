import { DEFAULT_BACKOFF } from "./defaults";

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Automatic attempts before giving up until the next use. */
  maxAttempts?: number;
}

/** Capped exponential backoff with a little jitter so that many servers do not restart in lockstep. */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = options.initialMs ?? DEFAULT_BACKOFF.initialMs;
  const max = options.maxMs ?? DEFAULT_BACKOFF.maxMs;
  const base = Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.85 + random() * 0.3));
}
