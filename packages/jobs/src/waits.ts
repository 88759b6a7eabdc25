/** How long a wait may last, and the signal that ends it early. */
export interface WaitBounds {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** Waits until every one of `pending` resolves, the time passes or the signal aborts. */
export async function waitAll(pending: Promise<void>[], bounds: WaitBounds): Promise<void> {
  if (pending.length === 0 || bounds.timeoutMs <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  await Promise.race([
    Promise.all(pending),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, bounds.timeoutMs);
      onAbort = resolve;
      bounds.signal?.addEventListener("abort", onAbort, { once: true });
    }),
  ]);
  clearTimeout(timer);
  if (onAbort) bounds.signal?.removeEventListener("abort", onAbort);
}

/** Checks `done` every `everyMs`, calling `refresh` between checks, until it holds, the time passes or the signal aborts. */
export async function pollUntil(done: () => boolean, refresh: () => Promise<void>, bounds: WaitBounds & { everyMs: number; now: () => number }): Promise<void> {
  const until = bounds.now() + bounds.timeoutMs;
  while (bounds.now() < until && !bounds.signal?.aborted) {
    if (done()) return;
    await new Promise((resolve) => setTimeout(resolve, bounds.everyMs));
    await refresh();
  }
}
