import type { SharedSlots } from "@codemux/core";

/** A place's lease: an instance that died frees its places within this. */
const LEASE_MS = 60_000;
/** Leases are renewed this often, well within one: a renewal missed while Redis is away is made up by the next. */
const RENEW_MS = LEASE_MS / 3;

/**
 * The places a policy's `concurrentJobs` counts when instances share a store: one per job of a principal,
 * running or waiting anywhere, taken when the job is started and given back when it ends on whichever
 * instance ran it. This instance renews the leases of the places of jobs it holds (running, waiting here,
 * or put in the shared queue), until they are given back.
 */
export class SharedJobPlaces {
  readonly #slots: SharedSlots;
  /** The places this instance renews, by job id. */
  readonly #held = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(slots: SharedSlots) {
    this.#slots = slots;
  }

  /** Takes a place for job `id` of `principal` when it holds fewer than `max`; how many it holds either way. */
  async take(principal: string, id: string, max: number): Promise<{ taken: boolean; held: number }> {
    const place = await this.#slots.take(keyOf(principal), id, { max, leaseMs: LEASE_MS });
    if (place.taken) this.hold(principal, id);
    return place;
  }

  /** Renews the place of job `id` from now on (a job this instance took from the shared queue). */
  hold(principal: string, id: string): void {
    this.#held.set(id, principal);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => void this.#renew(), RENEW_MS);
      this.#timer.unref();
    }
  }

  /** Gives job `id`'s place back, when this instance holds it: the job ended. Redis away: its lease runs out instead. */
  release(principal: string, id: string): void {
    if (!this.#held.delete(id)) return;
    this.#slots.release(keyOf(principal), id).catch(() => undefined);
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #renew(): Promise<void> {
    const places = [...this.#held].map(([holder, principal]) => ({ key: keyOf(principal), holder }));
    // Given back elsewhere (the job ran and ended on another instance), or run out: no longer this instance's to renew.
    // Redis away (the connection says so in the log): the next renewal, within the lease, makes up for this one.
    const gone = await this.#slots.renew(places, LEASE_MS).catch(() => []);
    for (const place of gone) this.#held.delete(place.holder);
  }
}

function keyOf(principal: string): string {
  return `jobs:${principal}`;
}
