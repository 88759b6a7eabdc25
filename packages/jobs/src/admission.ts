import type { SessionInfo, SharedSlots } from "@codemux/core";
import { JobsError } from "./errors";
import { SharedJobPlaces } from "./job-places";
import type { JobRecord } from "./types";

/** What one principal may hold; an unset field keeps the default. */
export interface JobLimits {
  /** Jobs waiting in the queue. */
  jobs?: number;
}

export interface AdmissionOptions {
  maxConcurrent: number;
  maxQueued: number;
  maxQueuedPerPrincipal: number;
  principalLimits: Record<string, JobLimits>;
  jobsAtOnce: ((session: SessionInfo) => number | undefined) | undefined;
  slots: SharedSlots | undefined;
  /** The records of the jobs running or waiting in this process. */
  live(): Iterable<JobRecord>;
}

/** Whether a job may start or wait: a principal's jobs at once (its policy), the queue's room and a principal's share of it. */
export class Admission {
  readonly #options: AdmissionOptions;
  readonly #places: SharedJobPlaces | undefined;

  constructor(options: AdmissionOptions) {
    this.#options = options;
    this.#places = options.slots ? new SharedJobPlaces(options.slots) : undefined;
  }

  /**
   * A job past the principal's jobs at once (running or waiting), as its policy sets them, is refused. With a
   * shared store they are counted on every instance together, and job `id` holds its place until it ends; a store
   * that does not answer refuses the job with its own sentence (the limit is never waived).
   */
  async takePlace(session: SessionInfo, id: string): Promise<void> {
    const most = this.#options.jobsAtOnce?.(session);
    if (most === undefined) return;
    let held = 0;
    if (this.#places) {
      const place = await this.#places.take(session.principal, id, most);
      if (place.taken) return;
      held = place.held;
    } else {
      for (const record of this.#options.live()) if (record.principal === session.principal) held++;
      if (held < most) return;
    }
    throw new JobsError(
      "QUEUE_FULL",
      `Principal "${session.principal}" already has ${held} background jobs${this.#places ? " on the instances of this deployment" : ""}, as many as its policy allows at once (concurrentJobs: ${most}); wait for one to finish (jobs {action:"list"}) or cancel one (jobs {action:"cancel"}).`,
      { data: { limit: "concurrentJobs", max: most } },
    );
  }

  /** Renews the place of a job taken from the shared queue (the instance that queued it took it under its policy). */
  holdTaken(session: SessionInfo, principal: string, id: string): void {
    if (this.#options.jobsAtOnce?.(session) !== undefined) this.#places?.hold(principal, id);
  }

  /** Gives a job's place back: it ended, or was refused after all. */
  release(principal: string, id: string): void {
    this.#places?.release(principal, id);
  }

  /** A job that would wait behind `waiting`: refused when the queue is full, or when its principal already has its share waiting. */
  checkQueueRoom(principal: string, waiting: JobRecord[]): void {
    const { maxQueued, maxConcurrent, principalLimits, maxQueuedPerPrincipal } = this.#options;
    if (waiting.length >= maxQueued) {
      throw new JobsError(
        "QUEUE_FULL",
        `The job queue is full (${maxQueued} waiting, ${maxConcurrent} running); wait for some to finish (jobs {action:"list"}) or cancel one (jobs {action:"cancel"}).`,
        { data: { limit: "maxQueued", max: maxQueued } },
      );
    }
    const share = principalLimits[principal]?.jobs ?? maxQueuedPerPrincipal;
    let theirs = 0;
    for (const job of waiting) if (job.principal === principal) theirs++;
    if (theirs >= share) {
      throw new JobsError(
        "QUEUE_FULL",
        `Principal "${principal}" already has ${theirs} jobs waiting, its limit (waiting jobs per principal: ${share}); wait for some to finish (jobs {action:"list"}), cancel one (jobs {action:"cancel"}), or raise http.limits.perPrincipal.jobs in the config.`,
        { data: { limit: "jobsPerPrincipal", max: share } },
      );
    }
  }

  close(): void {
    this.#places?.close();
  }
}
