import type { Logger } from "@codemux/core";
import type { JobFiles } from "./job-files";
import { compactJournal, isExpired, type JournalWriter, loadJournal, segmentAlive } from "./journal";
import type { JobRecord } from "./types";

export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const EXPIRY_SWEEP_MS = 60 * 60 * 1000;

export interface RetentionOptions {
  dir: string;
  logger: Logger;
  /** The jobs this manager knows, by id. */
  jobs: Map<string, JobRecord>;
  files: JobFiles;
  /** This process's journal segment, once open. */
  writer: () => JournalWriter | undefined;
  now: () => number;
  retentionMs?: number;
  retentionFor?: ((principal: string) => number | undefined) | undefined;
}

/** How long finished jobs stay, and their going: the hourly sweep of expired ones, and a principal's jobs on `forget`. */
export class Retention {
  readonly retentionMs: number;
  readonly #options: RetentionOptions;
  #sweepTimer: NodeJS.Timeout | undefined;

  constructor(options: RetentionOptions) {
    this.#options = options;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  }

  /** How long this job stays after it ends: its principal's retention, else everyone's. */
  of(job: JobRecord): number {
    return this.#options.retentionFor?.(job.principal) ?? this.retentionMs;
  }

  expired(job: JobRecord, now: number): boolean {
    return isExpired(job, now, this.of(job));
  }

  /** Drops expired jobs (their records and files) every hour until `stop`. */
  startSweeping(): void {
    this.#sweepTimer = setInterval(() => void this.#sweep(), EXPIRY_SWEEP_MS);
    this.#sweepTimer.unref();
  }

  stop(): void {
    clearInterval(this.#sweepTimer);
  }

  async #sweep(): Promise<void> {
    const { jobs, files, now } = this.#options;
    const at = now();
    for (const job of [...jobs.values()]) {
      if (!this.expired(job, at)) continue;
      jobs.delete(job.id);
      await files.remove(job.id);
    }
  }

  /**
   * Deletes every job of `principal` (none of them still running here): their records, transcripts and results, from this
   * process's journal segment and from those of processes that are gone. Resolves with how many jobs went.
   */
  async forget(principal: string): Promise<number> {
    const { dir, logger, jobs, files } = this.#options;
    const writer = this.#options.writer();
    const now = this.#options.now();
    const loaded = await loadJournal(dir, { logger });
    const ids = new Set<string>();
    for (const job of [...jobs.values(), ...loaded.jobs.values()]) if (job.principal === principal) ids.add(job.id);
    // Counted by the process that journaled them (or any, for a process that is gone), so that processes sharing this folder count each once.
    const alive = new Set(loaded.segments.filter((segment) => segmentAlive(segment, now)).map((segment) => segment.pid));
    const counted = [...ids].filter((id) => {
      const job = loaded.jobs.get(id);
      return job !== undefined && (job.pid === process.pid || !alive.has(job.pid));
    }).length;
    for (const id of ids) {
      jobs.delete(id);
      await files.remove(id);
    }
    await writer?.rewrite((event) => ids.has(event.id));
    const compacted = await compactJournal(dir, loaded, {
      now,
      drop: (job) => ids.has(job.id) || this.expired(job, now),
      logger,
      ...(writer ? { keep: writer.file } : {}),
    });
    const stillThere = loaded.segments.some((s) => s.file !== writer?.file && segmentAlive(s, now));
    if (compacted === undefined && ids.size > 0 && stillThere)
      logger.warn(`jobs: another codemux process runs on ${dir}; jobs of "${principal}" it journaled stay until it stops and the journal is compacted.`);
    return counted;
  }
}
