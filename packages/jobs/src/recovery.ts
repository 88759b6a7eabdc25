import type { JobShare, Logger } from "@codemux/core";
import { mkdir } from "node:fs/promises";
import { compactJournal, JournalWriter, loadJournal, segmentAlive } from "./journal";
import type { Retention } from "./retention";
import type { SharedQueue } from "./shared-queue";
import { callCounts, readTranscript } from "./transcript";
import { TERMINAL, type JobRecord, type JournalEvent } from "./types";

/** What recovery found at open: jobs of a previous run that had not finished, now `interrupted`. */
export interface RecoveryReport {
  loaded: number;
  interrupted: string[];
  skippedLines: number;
  compacted?: { removedSegments: number; expired: number };
}

/** What opening the journal needs of the job manager. */
export interface RecoveryHost {
  readonly dir: string;
  readonly logger: Logger;
  /** The jobs the manager knows, by id: recovery fills it with those not expired. */
  readonly jobs: Map<string, JobRecord>;
  readonly retention: Retention;
  readonly share: JobShare | undefined;
  readonly shared: SharedQueue | undefined;
  now(): number;
  transcriptFile(id: string): string;
  publish(record: JobRecord): Promise<void>;
  /** This process's journal segment, open: called before anything is journaled. */
  opened(writer: JournalWriter): void;
}

/**
 * Opens the journal: reads it, ends the jobs of processes that are gone `interrupted` (their
 * transcripts tell how many calls had completed), compacts it, and hands the jobs of the shared
 * queue back to it.
 */
export async function openJournal(host: RecoveryHost): Promise<RecoveryReport> {
  const { dir, logger, retention, share } = host;
  // An unwritable folder still runs jobs (the writer says so once); they just do not survive a restart.
  await mkdir(dir, { recursive: true, mode: 0o700 }).catch(() => undefined);
  const loaded = await loadJournal(dir, { logger });
  const now = host.now();
  const writer = await JournalWriter.open(dir, { logger, now });
  host.opened(writer);
  const alivePids = new Set(loaded.segments.filter((s) => segmentAlive(s, now)).map((s) => s.pid));
  const interrupted: string[] = [];
  const ends: JournalEvent[] = [];
  const handed: JobRecord[] = [];
  const retaken: JobRecord[] = [];
  for (const job of loaded.jobs.values()) {
    if (TERMINAL.has(job.status) || alivePids.has(job.pid)) continue;
    // Handed to the shared queue: another instance may run it; its shared record tells (an instance restarted with the same id included).
    if (share && job.inSharedQueue) {
      handed.push(job);
      continue;
    }
    // Taken from the shared queue and stopped before it started: it never ran, so it goes back for any instance.
    if (share && job.taken && job.startedAt === undefined) {
      retaken.push(job);
      continue;
    }
    ends.push(await interruptedEnd(job, host.transcriptFile(job.id), now));
    interrupted.push(job.id);
  }
  // Lines are written in order; the last one's fsync covers those before it.
  let written = Promise.resolve();
  for (const [index, event] of ends.entries()) written = writer.append(event, { sync: index === ends.length - 1 });
  await written;
  // Restarted with the same id, this instance is "alive" again to the others: only its own word ends its old jobs there.
  for (const id of interrupted) {
    const job = loaded.jobs.get(id);
    if (job && share) void host.publish({ ...job, instance: share.instanceId });
  }
  if (interrupted.length) logger.info(`jobs: ${interrupted.length} job(s) of a previous run were interrupted: ${interrupted.slice(0, 10).join(", ")}`);
  let compacted: RecoveryReport["compacted"];
  try {
    compacted = await compactJournal(dir, loaded, { now, drop: (job) => retention.expired(job, now), logger, keep: writer.file });
  } catch (error) {
    logger.warn(`jobs: journal compaction failed (${(error as Error).message}); it is tried again at the next start.`);
  }
  for (const job of loaded.jobs.values()) if (!retention.expired(job, now)) host.jobs.set(job.id, job);
  for (const job of retaken) {
    job.inSharedQueue = true;
    delete job.taken;
    await writer.append({ t: "handed", id: job.id, ts: now }, { sync: true });
    await host.shared?.handBackTaken(job).catch((error: unknown) => {
      logger.warn(`jobs: cannot hand ${job.id} back to the shared queue (${(error as Error).message}); any instance ends it once its wait is over.`);
    });
    handed.push(job);
  }
  for (const job of handed) void host.shared?.adoptHanded(job);
  retention.startSweeping();
  return { loaded: host.jobs.size, interrupted, skippedLines: loaded.skipped.reduce((n, s) => n + s.lines, 0), ...(compacted ? { compacted } : {}) };
}

/** Marks a job of a process that is gone `interrupted`, counting its calls from its transcript; resolves with its end line. */
async function interruptedEnd(job: JobRecord, transcriptFile: string, now: number): Promise<JournalEvent> {
  const { entries } = await readTranscript(transcriptFile);
  const counts = callCounts(entries);
  job.status = "interrupted";
  job.endedAt = now;
  job.toolCalls = Math.max(job.toolCalls, counts.completed);
  job.inFlight = counts.inFlight;
  job.error = `codemux stopped while this job ran; ${job.toolCalls} call(s) had completed, ${job.inFlight} were in flight (their outcome is unknown).`;
  return {
    t: "end",
    id: job.id,
    ts: now,
    status: "interrupted",
    toolCalls: job.toolCalls,
    inFlight: job.inFlight,
    error: job.error,
    ...(job.progress ? { progress: job.progress } : {}),
  };
}

/** Brings `stale` jobs (run by other processes on this folder) up to date from the journal as it is now; one whose process is gone is `interrupted`. */
export async function refreshFromJournal(dir: string, stale: JobRecord[], now: number): Promise<void> {
  const loaded = await loadJournal(dir);
  const alive = new Set(loaded.segments.filter((s) => segmentAlive(s, now)).map((s) => s.pid));
  for (const job of stale) {
    const fresh = loaded.jobs.get(job.id);
    if (fresh) Object.assign(job, fresh);
    if (!TERMINAL.has(job.status) && !alive.has(job.pid)) {
      job.status = "interrupted";
      job.endedAt = now;
      job.error = `the codemux process that ran this job (pid ${job.pid}) stopped; ${job.toolCalls} call(s) had completed.`;
    }
  }
}
