import {
  callLine,
  silentLogger,
  type Logger,
  type CallContext,
  type ToolResult,
  type BackgroundWork,
  type JobRunner,
  type JobShare,
  type JobQueue,
} from "@codemux/core";
import { randomBytes } from "node:crypto";
import { Admission } from "./admission";
import { requestCancel } from "./cancel-request";
import { JobsError } from "./errors";
import { createdLine, journalPaths, type JournalWriter } from "./journal";
import { JournalMask } from "./journal-mask";
import { CancelRequests, JobFiles } from "./job-files";
import { JobTranscripts } from "./job-transcripts";
import type { LiveJob } from "./live-job";
import { DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_QUEUED, DEFAULT_MAX_RUN_MS, DEFAULT_MAX_WAIT_MS, type JobManagerOptions } from "./job-manager-options";
import { JobRuns } from "./job-runs";
import { isCarrier, portable, type PortableRunner } from "./portable";
import { openJournal, refreshFromJournal, type RecoveryReport } from "./recovery";
import { Retention } from "./retention";
import { SharedQueue, takenWork, type TakenJob } from "./shared-queue";
import { SharedRecords, SHARE_TTL_SLACK_MS } from "./shared-records";
import type { TranscriptRead, TranscriptWriter } from "./transcript";
import { TERMINAL, type JobRecord, type JobStatus } from "./types";
import { waitAll } from "./waits";

const FOREIGN_REFRESH_MS = 2_000;
const TAKEN_STOPPED = "The codemux instance that took this job from the shared queue stopped before it started it; it never ran: submit it again.";

/**
 * Runs background work with bounded concurrency, journals every job, keeps transcripts of its tool
 * calls, and answers status, waits and cancels. Opening reads the journal and marks jobs of dead
 * processes `interrupted`. The `JobRunner` codemux's core takes.
 */
export class JobManager implements JobRunner {
  readonly dir: string;
  readonly logger: Logger;
  readonly maxConcurrent: number;
  readonly maxQueued: number;
  readonly maxQueuedPerPrincipal: number;
  readonly retentionMs: number;
  readonly now: () => number;
  readonly paths: ReturnType<typeof journalPaths>;
  readonly #jobs = new Map<string, JobRecord>();
  readonly #runs: JobRuns;
  #draining = false;
  #opening: Promise<RecoveryReport> | undefined;
  readonly #admission: Admission;
  readonly #mask: JournalMask;
  readonly #retention: Retention;
  #writer: JournalWriter | undefined;
  #closed = false;
  #refreshedAt = 0;
  readonly #files: JobFiles;
  readonly #transcripts: JobTranscripts;
  readonly #cancels: CancelRequests;
  readonly #share: JobShare | undefined;
  readonly #records: SharedRecords | undefined;
  /** Set with `share`: the shared queue once `shareQueue` attaches one. */
  readonly #shared: SharedQueue | undefined;

  constructor(options: JobManagerOptions) {
    this.dir = options.dir;
    this.paths = journalPaths(options.dir);
    this.#files = new JobFiles(this.paths);
    this.#cancels = new CancelRequests(this.paths, {
      liveCount: () => this.#runs.live.size,
      isLive: (id) => this.#runs.live.has(id),
      known: (id) => this.#jobs.get(id),
      cancel: async (id, by) => {
        const live = this.#runs.live.get(id);
        if (live) await this.#runs.finish(live, "cancelled", { by });
      },
      now: () => this.now(),
    });
    this.logger = options.logger ?? silentLogger;
    this.maxConcurrent = Math.max(1, options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT);
    this.maxQueued = Math.max(0, options.maxQueued ?? DEFAULT_MAX_QUEUED);
    this.maxQueuedPerPrincipal = Math.max(1, options.maxQueuedPerPrincipal ?? Math.max(2, Math.floor(this.maxQueued / 4)));
    this.#admission = new Admission({
      maxConcurrent: this.maxConcurrent,
      maxQueued: this.maxQueued,
      maxQueuedPerPrincipal: this.maxQueuedPerPrincipal,
      principalLimits: options.principalLimits ?? {},
      jobsAtOnce: options.jobsAtOnce,
      slots: options.slots,
      live: () => [...this.#runs.live.values()].map((live) => live.record),
    });
    this.#mask = new JournalMask(options.redactor);
    this.now = options.now ?? Date.now;
    this.#retention = new Retention({
      dir: options.dir,
      logger: this.logger,
      jobs: this.#jobs,
      files: this.#files,
      writer: () => this.#writer,
      now: () => this.now(),
      retentionMs: options.retentionMs,
      retentionFor: options.retentionFor,
    });
    this.retentionMs = this.#retention.retentionMs;
    this.#share = options.share;
    this.#transcripts = new JobTranscripts({
      files: this.#files,
      logger: this.logger,
      share: options.share,
      now: () => this.now(),
      retentionOf: (job) => this.retentionOf(job),
    });
    this.#records = options.share ? new SharedRecords(options.share, this.logger, (record) => this.retentionOf(record) + SHARE_TTL_SLACK_MS) : undefined;
    this.#runs = new JobRuns({
      maxConcurrent: this.maxConcurrent,
      maxRunMs: Math.max(1, options.maxRunMs ?? DEFAULT_MAX_RUN_MS),
      mask: this.#mask,
      files: this.#files,
      transcripts: this.#transcripts,
      admission: this.#admission,
      records: this.#records,
      logger: this.logger,
      now: () => this.now(),
      writer: () => this.#writer,
      publish: (record) => this.#publish(record),
      roomChanged: () => this.#shared?.roomChanged(),
      started: () => this.#cancels.watch(),
      closed: () => this.#closed,
    });
    this.#shared = options.share ? this.#sharedQueueOn(options.share, Math.max(1, options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS)) : undefined;
    this.#share?.onCancel((id, by) => {
      const live = this.#runs.live.get(id);
      if (live) void this.#runs.finish(live, "cancelled", { by });
    });
    if (!options.openLater) void this.ready();
  }

  /** Resolves once the journal is read and recovered; opens it first when `openLater` left it closed. */
  ready(): Promise<RecoveryReport> {
    if (!this.#opening) {
      this.#opening = openJournal({
        dir: this.dir,
        logger: this.logger,
        jobs: this.#jobs,
        retention: this.#retention,
        share: this.#share,
        shared: this.#shared,
        now: () => this.now(),
        transcriptFile: (id) => this.#transcripts.file(id),
        publish: (record) => this.#publish(record),
        opened: (writer) => (this.#writer = writer),
      });
      // A failed open is reported by every later call; this keeps it from being an unhandled rejection meanwhile.
      this.#opening.catch(() => undefined);
    }
    return this.#opening;
  }

  /** Starts (or queues) work; resolves once the job is journaled, with its id and queue position. */
  async start(work: BackgroundWork, options: { callSession?: string } = {}): Promise<{ id: string; position?: number }> {
    await this.ready();
    if (this.#closed) throw new JobsError("CLOSED", "codemux is shutting down and takes no new jobs; start it again and retry.");
    if (this.#draining)
      throw new JobsError(
        "CLOSED",
        "This codemux instance is draining before it stops and takes no new jobs; retry in a few seconds (another instance will take it).",
      );
    const id = `job_${randomBytes(6).toString("hex")}`;
    await this.#admission.takePlace(work.session, id);
    try {
      return await this.#begin(id, work, options);
    } catch (error) {
      // Refused after all (no room to wait, the journal failed): the place goes back.
      this.#admission.release(work.session.principal, id);
      throw error;
    }
  }

  async #begin(id: string, work: BackgroundWork, options: { callSession?: string }): Promise<{ id: string; position?: number }> {
    const { principal } = work.session;
    const sharedQueue = this.#shared?.attached?.queue;
    const toShared = sharedQueue !== undefined && !this.#runs.local.hasSlot() && portable(work);
    if (toShared) {
      // What this instance put in the shared queue counts against the same limits: one principal cannot fill Redis. Redis down: counted as known.
      await this.refreshShared(principal).catch(() => undefined);
      this.#checkQueueRoom(principal);
    } else if (!this.#runs.local.hasSlot()) this.#checkQueueRoom(principal);
    const record = this.#mask.newRecord(id, work, { ...(this.#share ? { instance: this.#share.instanceId } : {}), createdAt: this.now() });
    if (toShared) return this.#queueShared(sharedQueue, record, work);
    const live = this.#runs.add(record, work, options.callSession);
    this.#jobs.set(id, record);
    await this.#writer?.append(createdLine(record), { sync: true });
    await this.#publish(record);
    if (this.#runs.local.hasSlot()) {
      this.#runs.launch(live);
      return { id };
    }
    return { id, position: this.#runs.local.enqueue(live) };
  }

  /**
   * With a shared queue (Redis): portable jobs that find this instance full wait there, and this
   * instance takes queued jobs (its own or others') while it has room. `run` runs a taken job's request.
   */
  shareQueue(queue: JobQueue, run: PortableRunner): void {
    if (!this.#shared) throw new JobsError("BAD_REQUEST", "A shared job queue needs the shared job records too: give the jobs the `share` option.");
    this.#shared.attach(queue, run, { concurrency: this.maxConcurrent, hasRoom: () => this.#hasRoom() });
  }

  #hasRoom(): boolean {
    return !this.#closed && !this.#draining && this.#runs.local.hasSlot() && this.#runs.local.waiting === 0;
  }

  /** The shared queue's side of this manager: its records, its journal, and running a job it took. */
  #sharedQueueOn(share: JobShare, maxWaitMs: number): SharedQueue {
    return new SharedQueue(
      {
        share,
        logger: this.logger,
        jobs: this.#jobs,
        live: this.#runs.live,
        now: () => this.now(),
        journal: async (event) => {
          await this.#writer?.append(event, { sync: true });
        },
        publish: (record, options) => this.#publish(record, options),
        releasePlace: (principal, id) => this.#admission.release(principal, id),
        retentionOf: (job) => this.retentionOf(job),
        runsElsewhere: (job) => this.#runsElsewhere(job),
        runTaken: (record, taken) => this.#runTaken(record, taken),
      },
      { maxWaitMs },
    );
  }

  /** Journals a job as created here and queues it for any instance; the instance that takes it publishes it as its own. */
  async #queueShared(queue: JobQueue, record: JobRecord, work: BackgroundWork): Promise<{ id: string; position?: number }> {
    this.#jobs.set(record.id, record);
    const { id, principal } = record;
    await this.#writer?.append(createdLine(record), { sync: true });
    try {
      await (this.#shared as SharedQueue).add(queue, record, work);
      return { id };
    } catch (error) {
      // Redis down: the job needs no shared state to run, so it waits for a slot here, as calls that need none go on.
      this.logger.warn(`jobs: cannot queue ${id} in the shared queue (${(error as Error).message}); it waits for a slot on this instance.`);
      const live = this.#runs.add(record, work);
      this.#runs.local.enqueue(live);
      try {
        this.#checkQueueRoom(principal, live);
      } catch (refusal) {
        await this.#runs.finish(live, "failed", { error: `${(error as Error).message} ${(refusal as Error).message}` });
        throw refusal;
      }
      this.#runs.pump();
      return TERMINAL.has(record.status) || record.status === "running" ? { id } : { id, position: this.#runs.local.position(id) ?? 0 };
    }
  }

  /** Runs a job taken from the shared queue (see SharedQueue); resolves when it ends here. */
  async #runTaken(record: JobRecord, taken: TakenJob): Promise<void> {
    const run = (this.#shared?.attached as { run: PortableRunner }).run;
    const { id } = record;
    // Journaled before it is claimed: restarted before it starts, this instance hands it back (it never ran).
    await this.#writer?.append(createdLine(record, { taken: true }), { sync: true });
    // Claimed before it starts: a taker that dies now leaves the record saying so, and the queue hands the job out again once
    // its lock lapses (the shared queue's check runs it then); once it started, it is never run again.
    await this.#publish(record);
    const live = this.#runs.add(record, takenWork(record, taken, run));
    live.origin = isCarrier(taken.trace) ? taken.trace : undefined;
    live.shared = true;
    live.taken = true;
    this.#jobs.set(id, record);
    // The place the instance that queued it took (under its policy) is this one's to renew, and give back, now.
    this.#admission.holdTaken(taken.session, record.principal, id);
    // Taken in the instant the last slot filled: it waits here, first in line.
    if (this.#runs.local.hasSlot()) this.#runs.launch(live);
    else this.#runs.local.enqueueFirst(live);
    await live.done;
  }

  /** A job that would wait: refused when the queue is full, or when its principal already has its share waiting (`self` already in it not counted). */
  #checkQueueRoom(principal: string, self?: LiveJob): void {
    this.#admission.checkQueueRoom(principal, [...this.#runs.local.waitingRecords(self), ...(this.#shared?.waiting() ?? [])]);
  }

  /** Shares a job's record with the other instances (Redis); see SharedRecords. */
  async #publish(record: JobRecord, options: { strict?: boolean } = {}): Promise<void> {
    await this.#records?.publish(record, options);
  }

  /**
   * With shared jobs: the records of `principal`'s jobs that other instances run, brought up to date;
   * one whose instance is gone is `interrupted`. Jobs this instance runs are its own to tell.
   */
  async refreshShared(principal: string, ids: string[] = []): Promise<void> {
    await this.#shared?.refresh(principal, ids);
  }

  /** A job of this principal, or undefined (another principal's job is as absent as a missing one). */
  get(id: string, principal: string): JobRecord | undefined {
    const job = this.#jobs.get(id);
    return job && job.principal === principal ? job : undefined;
  }

  /** Every principal's jobs, newest first: for an admin's view (the admin page), never for a principal's own answers. */
  all(): JobRecord[] {
    return [...this.#jobs.values()].sort((a, b) => b.createdAt - a.createdAt);
  }

  /** 1-based place in the queue of a queued job (jobs of principals running fewer may start before it). */
  position(id: string): number | undefined {
    return this.#runs.local.position(id);
  }

  /** This principal's jobs, newest first. */
  list(principal: string): JobRecord[] {
    return [...this.#jobs.values()].filter((j) => j.principal === principal).sort((a, b) => b.createdAt - a.createdAt);
  }

  /**
   * Jobs another codemux process runs (several clients share ~/.codemux) are known from the journal
   * as it was read; this reads it again (at most every 2 s) so their status is current.
   */
  async refreshForeign(): Promise<void> {
    await this.ready();
    // Jobs another instance runs, or that wait in the shared queue, are told by their shared records (refreshShared), not by this folder's journal.
    const stale = [...this.#jobs.values()].filter((j) => !TERMINAL.has(j.status) && !this.#runs.live.has(j.id) && !this.#runsElsewhere(j) && !j.inSharedQueue);
    const now = this.now();
    if (stale.length === 0 || now - this.#refreshedAt < FOREIGN_REFRESH_MS) return;
    this.#refreshedAt = now;
    await refreshFromJournal(this.dir, stale, now);
  }

  /** True when the job runs in this process (false for a running job of another codemux process). */
  isLocal(id: string): boolean {
    return this.#runs.live.has(id);
  }

  /** How long this job stays after it ends: its principal's retention, else everyone's. */
  retentionOf(job: JobRecord): number {
    return this.#retention.of(job);
  }

  /**
   * Deletes every job of `principal` (`codemux forget`): its jobs still running or waiting here are
   * cancelled first, then their records, transcripts and results go, from this process's journal
   * segment and from those of processes that are gone. Resolves with how many jobs went.
   */
  async forget(principal: string): Promise<number> {
    await this.ready();
    for (const live of [...this.#runs.live.values()]) if (live.record.principal === principal) await this.#runs.finish(live, "cancelled", { by: "forget" });
    return this.#retention.forget(principal);
  }

  /** Cancels a queued or running job; a finished one is returned unchanged. Undefined when it is not this principal's. */
  async cancel(id: string, principal: string, by = "tool"): Promise<JobRecord | undefined> {
    await this.ready();
    const job = this.get(id, principal);
    if (!job) return undefined;
    const live = this.#runs.live.get(id);
    if (live) await this.#runs.finish(live, "cancelled", { by });
    else if (job.status === "queued" && this.#shared?.attached && !this.#runsElsewhere(job)) await this.#shared.cancel(job, by);
    // A job another instance runs hears it on the shared channel; another process on this folder picks up the file.
    else if (!TERMINAL.has(job.status) && this.#runsElsewhere(job)) await this.#share?.cancel(id, by);
    else if (!TERMINAL.has(job.status)) await requestCancel(this.dir, id, by);
    return job;
  }

  /** Waits until every listed job ends, the time passes or the signal aborts. */
  async wait(ids: string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const pending = () => ids.map((id) => this.#runs.live.get(id)?.done).filter((p): p is Promise<void> => p !== undefined);
    if (!this.#shared || !ids.some((id) => this.#remoteRunning(id))) return waitAll(pending(), options);
    const ended = () => pending().length === 0 && !ids.some((id) => this.#remoteRunning(id));
    await this.#shared.waitElsewhere(ids, ended, options);
  }

  #runsElsewhere(job: JobRecord): boolean {
    return this.#share !== undefined && job.instance !== undefined && job.instance !== this.#share.instanceId;
  }

  #remoteRunning(id: string): boolean {
    const job = this.#jobs.get(id);
    return job !== undefined && !this.#runs.live.has(id) && !TERMINAL.has(job.status);
  }

  /** A job's full result (from its file when it was too large for the journal line). */
  async result(job: JobRecord): Promise<ToolResult | undefined> {
    if (job.result) return job.result;
    if (!job.resultRef) return undefined;
    if (this.#records && this.#runsElsewhere(job)) return this.#records.result(job);
    return this.#files.readResult({ ...job, resultRef: job.resultRef });
  }

  /** A job's transcript: its file when it ran here, the shared copy when another instance ran it. A transcript that cannot be read says why. */
  async transcript(job: JobRecord): Promise<TranscriptRead> {
    return this.#transcripts.read(job, this.#runsElsewhere(job));
  }

  /** Appends to a live job's transcript (the agent journals its turns this way). */
  note(id: string, entry: Parameters<TranscriptWriter["append"]>[0]): void {
    void this.#runs.live.get(id)?.transcript.append(entry);
  }

  /**
   * The job a downstream call belongs to, if any: by the job's own signal (call_tool), its own
   * session (the agent), or, for a snippet's inner calls, by asking the call's progress sink (it is
   * the job's when the snippet runs in the background). Foreground calls belong to none.
   */
  jobForCall(ctx: Pick<CallContext, "signal" | "session" | "origin" | "progress"> & { job?: string | undefined }): string | undefined {
    if (ctx.job !== undefined) return this.#runs.live.has(ctx.job) ? ctx.job : undefined;
    return this.#runs.forCall(ctx)?.record.id;
  }

  /** Runs one tool call of a job and writes it to the job's transcript. */
  async recordCall<T extends ToolResult>(id: string, call: { tool: string; args: unknown; origin: string }, run: () => Promise<T>): Promise<T> {
    const live = this.#runs.live.get(id);
    if (!live) return run();
    this.#runs.noteProgress(live, { message: callLine(call.tool, call.args, (text) => this.#mask.text(text)) }, false);
    return this.#transcripts.record(live, call, run);
  }

  /**
   * SIGTERM's first step: takes no new jobs and hands the queued ones back. With a shared queue, a
   * job another instance can run goes there (still `queued`, for whichever instance has room); the
   * rest end `interrupted` with a note to resubmit (journaled, and published to the share so every
   * instance's `jobs` says so). Jobs running here go on until `close`.
   */
  async drain(): Promise<void> {
    if (this.#draining || this.#closed) return;
    this.#draining = true;
    // A draining instance takes nothing more from the shared queue.
    this.#shared?.roomChanged();
    const queued = this.#runs.local.waitingJobs();
    await Promise.all(queued.map((job) => this.#handBack(job)));
  }

  async #handBack(live: LiveJob): Promise<void> {
    const shared = this.#shared;
    const queue = shared?.attached?.queue;
    // A job taken from the shared queue is held there as this instance's until it ends: it ends here, saying so.
    if (live.taken) return this.#runs.finish(live, "interrupted", { by: "drain", error: TAKEN_STOPPED });
    if (shared && queue && portable(live.work)) {
      this.#runs.local.remove(live);
      this.#runs.live.delete(live.record.id);
      try {
        await shared.handBack(queue, live.record, live.work);
        await live.transcript.close();
        live.resolve();
        return;
      } catch (error) {
        this.logger.warn(`jobs: cannot hand ${live.record.id} to the shared queue (${(error as Error).message}); it ends interrupted.`);
        this.#runs.live.set(live.record.id, live);
      }
    }
    await this.#runs.finish(live, "interrupted", { by: "drain", error: "codemux stopped before this job started; it never ran: submit it again." });
  }

  /** Stops taking jobs; jobs still running here are aborted and journaled `interrupted`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    // A journal never opened has nothing to close (and is not opened now).
    await this.#opening?.catch(() => undefined);
    this.#closed = true;
    this.#cancels.stop();
    this.#retention.stop();
    this.#admission.close();
    this.#shared?.close();
    this.#records?.close();
    const live = [...this.#runs.live.values()];
    await Promise.all(
      live.map((job) => {
        job.record.inFlight = Math.max(0, job.record.inFlight);
        return this.#runs.finish(job, "interrupted", {
          by: "shutdown",
          error: `codemux stopped while this job ran; ${job.record.toolCalls} call(s) had completed, ${job.record.inFlight} were in flight.`,
        });
      }),
    );
    await this.#writer?.close();
  }
}

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL.has(status);
}

export type { JobManagerOptions } from "./job-manager-options";
export type { PortableRunner } from "./portable";
