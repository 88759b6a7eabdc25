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

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
