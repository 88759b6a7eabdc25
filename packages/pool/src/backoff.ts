export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Automatic attempts before giving up until the next use. */
  maxAttempts?: number;
}

/** Capped exponential backoff with a little jitter so that many servers do not restart in lockstep. */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = options.initialMs ?? 500;
  const max = options.maxMs ?? 30_000;
  const base = Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.85 + random() * 0.3));
}
