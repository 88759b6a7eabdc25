import {
  callLine,
  isSharedStateDown,
  oneLine,
  redactSecrets,
  silentLogger,
  type Logger,
  type CallContext,
  type Progress,
  type ToolResult,
  type BackgroundWork,
  type JobRunner,
  type SessionInfo,
  type JobShare,
  type JobQueue,
  type SharedSlots,
} from "@codemux/core";
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { requestCancel } from "./cancel-request";
import { JobsError } from "./errors";
import { compactJournal, INLINE_RESULT_BYTES, journalPaths, JournalWriter, loadJournal, segmentAlive } from "./journal";
import { CancelRequests, JobFiles } from "./job-files";
import { SharedJobPlaces } from "./job-places";
import type { LiveJob } from "./live-job";
import { LocalQueue } from "./local-queue";
import { boundedRequest, errorText, isCarrier, portable, type PortableRunner } from "./portable";
import { Retention } from "./retention";
import { SharedQueue, type TakenJob } from "./shared-queue";
import { SharedRecords, SHARE_TTL_SLACK_MS } from "./shared-records";
import { argsDigest, callCounts, MAX_TRANSCRIPT_BYTES, parseTranscript, readTranscript, resultSize, TranscriptWriter, type TranscriptRead } from "./transcript";
import { endJobSpan, inJobSpan, jobOrigin, startJobSpan } from "./tracing";
import { TERMINAL, type JobProgress, type JobRecord, type JobStatus, type JournalEvent, type TerminalStatus } from "./types";

export const DEFAULT_MAX_CONCURRENT = 4;
export const DEFAULT_MAX_QUEUED = 50;
/** Progress lines are journaled at most this often per job (the last one is always in the end line). */
const PROGRESS_JOURNAL_MS = 1_000;
const FOREIGN_REFRESH_MS = 2_000;
/** A job waits this long in the shared queue for an instance with room, by default; then it ends failed, never run. */
const DEFAULT_MAX_WAIT_MS = 10 * 60 * 1000;
const DEFAULT_MAX_RUN_MS = 30 * 60 * 1000;
const TAKEN_STOPPED = "The codemux instance that took this job from the shared queue stopped before it started it; it never ran: submit it again.";
const SHARED_WAIT_POLL_MS = 500;

/**
 * Masks secrets in what the journal keeps: a job's request, its description, progress and error lines.
 * `@codemux/hooks`' `Redactor` is one (the rule the audit plugin applies to arguments).
 */
export interface JournalRedactor {
  value(input: unknown, options: { keys: boolean }): { value: unknown };
  text(input: string): { text: string };
}

/** What one principal may hold; an unset field keeps the default. */
export interface JobLimits {
  /** Jobs waiting in the queue. */
  jobs?: number;
}

export interface JobManagerOptions {
  /** The journal's folder, `<dataDir>/jobs`. */
  dir: string;
  /** Open the journal at the first `ready()` rather than at once (a process that may be ended before it serves, such as a protocol probe). */
  openLater?: boolean;
  logger?: Logger;
  /** Jobs running at once (all principals; default 4); more wait in the queue. */
  maxConcurrent?: number;
  /** Jobs waiting at most (default 50); past it a start is refused. */
  maxQueued?: number;
  /** Jobs one principal may have waiting; a quarter of `maxQueued` (at least 2) by default. */
  maxQueuedPerPrincipal?: number;
  /** Limits for named principals over the default share: `{ ci: { jobs: 20 } }`. */
  principalLimits?: Record<string, JobLimits>;
  /** Jobs a session's principal may have at once, running or waiting (its policy's `concurrentJobs`); no limit when undefined. */
  jobsAtOnce?: (session: SessionInfo) => number | undefined;
  /**
   * Masks secrets in the journal. Without one the journal keeps only a digest of each request (no
   * arguments, no snippet), and descriptions and progress lines with credentials masked.
   */
  redactor?: JournalRedactor;
  /** How long a finished job stays readable (and its transcript kept; default 7 days). */
  retentionMs?: number;
  /** How long a principal's finished jobs stay (the config's `retention`); `retentionMs` otherwise. */
  retentionFor?: (principal: string) => number | undefined;
  /** Jobs seen by every instance (Redis): status, progress, transcripts and results readable, and cancels obeyed, from any of them. */
  share?: JobShare;
  /** Where `jobsAtOnce` is counted when instances share a store (Redis): a principal's jobs on all of them together; this instance's alone when absent. */
  slots?: SharedSlots;
  /** How long a job waits in the shared queue for an instance with room before it ends failed (default 10 min). */
  maxWaitMs?: number;
  /** How long a running snippet job may wait on tools (default 30 min); its own computing keeps `execute_code`'s timeout. */
  maxRunMs?: number;
  now?: () => number;
}

/** What recovery found at open: jobs of a previous run that had not finished, now `interrupted`. */
export interface RecoveryReport {
  loaded: number;
  interrupted: string[];
  skippedLines: number;
  compacted?: { removedSegments: number; expired: number };
}

/** How long a drain keeps trying to hand a queued job back to the shared queue (a Redis just back, its queue connection not yet), and the pause between tries: well inside serve's 30 s drain. */
const HAND_BACK_WAIT_MS = 10_000;
const HAND_BACK_RETRY_MS = 250;

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
  readonly #live = new Map<string, LiveJob>();
  readonly #local: LocalQueue<LiveJob>;
  #draining = false;
  readonly #bySignal = new WeakMap<AbortSignal, LiveJob>();
  readonly #bySession = new Map<string, LiveJob>();
  #opening: Promise<RecoveryReport> | undefined;
  readonly #principalLimits: Record<string, JobLimits>;
  readonly #jobsAtOnce: ((session: SessionInfo) => number | undefined) | undefined;
  readonly #redactor: JournalRedactor | undefined;
  readonly #retention: Retention;
  #writer: JournalWriter | undefined;
  #closed = false;
  #refreshedAt = 0;
  readonly #files: JobFiles;
  readonly #cancels: CancelRequests;
  readonly #share: JobShare | undefined;
  readonly #records: SharedRecords | undefined;
  readonly #places: SharedJobPlaces | undefined;
  /** Set with `share`: the shared queue once `shareQueue` attaches one. */
  readonly #shared: SharedQueue | undefined;
  readonly #maxRunMs: number;

  constructor(options: JobManagerOptions) {
    this.dir = options.dir;
    this.paths = journalPaths(options.dir);
    this.#files = new JobFiles(this.paths);
    this.#cancels = new CancelRequests(this.paths, {
      liveCount: () => this.#live.size,
      isLive: (id) => this.#live.has(id),
      known: (id) => this.#jobs.get(id),
      cancel: async (id, by) => {
        const live = this.#live.get(id);
        if (live) await this.#finish(live, "cancelled", { by });
      },
      now: () => this.now(),
    });
    this.logger = options.logger ?? silentLogger;
    this.maxConcurrent = Math.max(1, options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT);
    this.#local = new LocalQueue(this.maxConcurrent);
    this.maxQueued = Math.max(0, options.maxQueued ?? DEFAULT_MAX_QUEUED);
    this.maxQueuedPerPrincipal = Math.max(1, options.maxQueuedPerPrincipal ?? Math.max(2, Math.floor(this.maxQueued / 4)));
    this.#principalLimits = options.principalLimits ?? {};
    this.#jobsAtOnce = options.jobsAtOnce;
    this.#redactor = options.redactor;
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
    this.#records = options.share ? new SharedRecords(options.share, this.logger, (record) => this.retentionOf(record) + SHARE_TTL_SLACK_MS) : undefined;
    this.#places = options.slots ? new SharedJobPlaces(options.slots) : undefined;
    this.#shared = options.share ? this.#sharedQueueOn(options.share, Math.max(1, options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS)) : undefined;
    this.#maxRunMs = Math.max(1, options.maxRunMs ?? DEFAULT_MAX_RUN_MS);
    this.#share?.onCancel((id, by) => {
      const live = this.#live.get(id);
      if (live) void this.#finish(live, "cancelled", { by });
    });
    if (!options.openLater) void this.ready();
  }

  /** Resolves once the journal is read and recovered; opens it first when `openLater` left it closed. */
  ready(): Promise<RecoveryReport> {
    if (!this.#opening) {
      this.#opening = this.#open();
      // A failed open is reported by every later call; this keeps it from being an unhandled rejection meanwhile.
      this.#opening.catch(() => undefined);
    }
    return this.#opening;
  }

  async #open(): Promise<RecoveryReport> {
    // An unwritable folder still runs jobs (the writer says so once); they just do not survive a restart.
    await mkdir(this.dir, { recursive: true, mode: 0o700 }).catch(() => undefined);
    const loaded = await loadJournal(this.dir, { logger: this.logger });
    const now = this.now();
    this.#writer = await JournalWriter.open(this.dir, { logger: this.logger, now });
    const alivePids = new Set(loaded.segments.filter((s) => segmentAlive(s, now)).map((s) => s.pid));
    const interrupted: string[] = [];
    const ends: JournalEvent[] = [];
    const handed: JobRecord[] = [];
    const retaken: JobRecord[] = [];
    for (const job of loaded.jobs.values()) {
      if (TERMINAL.has(job.status) || alivePids.has(job.pid)) continue;
      // Handed to the shared queue: another instance may run it; its shared record tells (an instance restarted with the same id included).
      if (this.#share && job.inSharedQueue) {
        handed.push(job);
        continue;
      }
      // Taken from the shared queue and stopped before it started: it never ran, so it goes back for any instance.
      if (this.#share && job.taken && job.startedAt === undefined) {
        retaken.push(job);
        continue;
      }
      const { entries } = await readTranscript(this.#transcriptFile(job.id));
      const counts = callCounts(entries);
      job.status = "interrupted";
      job.endedAt = now;
      job.toolCalls = Math.max(job.toolCalls, counts.completed);
      job.inFlight = counts.inFlight;
      job.error = `codemux stopped while this job ran; ${job.toolCalls} call(s) had completed, ${job.inFlight} were in flight (their outcome is unknown).`;
      interrupted.push(job.id);
      ends.push({
        t: "end",
        id: job.id,
        ts: now,
        status: "interrupted",
        toolCalls: job.toolCalls,
        inFlight: job.inFlight,
        error: job.error,
        ...(job.progress ? { progress: job.progress } : {}),
      });
    }
    // Lines are written in order; the last one's fsync covers those before it.
    let written = Promise.resolve();
    for (const [index, event] of ends.entries()) written = this.#writer.append(event, { sync: index === ends.length - 1 });
    await written;
    // Restarted with the same id, this instance is "alive" again to the others: only its own word ends its old jobs there.
    for (const id of interrupted) {
      const job = loaded.jobs.get(id);
      if (job && this.#share) void this.#publish({ ...job, instance: this.#share.instanceId });
    }
    if (interrupted.length) this.logger.info(`jobs: ${interrupted.length} job(s) of a previous run were interrupted: ${interrupted.slice(0, 10).join(", ")}`);
    let compacted: RecoveryReport["compacted"];
    try {
      compacted = await compactJournal(this.dir, loaded, {
        now,
        drop: (job) => this.#retention.expired(job, now),
        logger: this.logger,
        keep: this.#writer.file,
      });
    } catch (error) {
      this.logger.warn(`jobs: journal compaction failed (${(error as Error).message}); it is tried again at the next start.`);
    }
    for (const job of loaded.jobs.values()) if (!this.#retention.expired(job, now)) this.#jobs.set(job.id, job);
    for (const job of retaken) {
      job.inSharedQueue = true;
      delete job.taken;
      await this.#writer.append({ t: "handed", id: job.id, ts: now }, { sync: true });
      await this.#shared?.handBackTaken(job).catch((error: unknown) => {
        this.logger.warn(`jobs: cannot hand ${job.id} back to the shared queue (${(error as Error).message}); any instance ends it once its wait is over.`);
      });
      handed.push(job);
    }
    for (const job of handed) void this.#shared?.adoptHanded(job);
    this.#retention.startSweeping();
    return { loaded: this.#jobs.size, interrupted, skippedLines: loaded.skipped.reduce((n, s) => n + s.lines, 0), ...(compacted ? { compacted } : {}) };
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
    await this.#takePlace(work.session, id);
    try {
      return await this.#begin(id, work, options);
    } catch (error) {
      // Refused after all (no room to wait, the journal failed): the place goes back.
      this.#places?.release(work.session.principal, id);
      throw error;
    }
  }

  async #begin(id: string, work: BackgroundWork, options: { callSession?: string }): Promise<{ id: string; position?: number }> {
    const { principal } = work.session;
    const sharedQueue = this.#shared?.attached?.queue;
    const toShared = sharedQueue !== undefined && !this.#local.hasSlot() && portable(work);
    if (toShared) {
      // What this instance put in the shared queue counts against the same limits: one principal cannot fill Redis. Redis down: counted as known.
      await this.refreshShared(principal).catch(() => undefined);
      this.#checkQueueRoom(principal);
    } else if (!this.#local.hasSlot()) this.#checkQueueRoom(principal);
    const record: JobRecord = {
      id,
      kind: work.kind,
      description: this.#mask(oneLine(work.description, 120)),
      principal,
      session: work.session.id,
      request: this.#journaled(work.request),
      pid: process.pid,
      ...(this.#share ? { instance: this.#share.instanceId } : {}),
      createdAt: this.now(),
      status: "queued",
      toolCalls: 0,
      inFlight: 0,
    };
    if (toShared) return this.#queueShared(sharedQueue, record, work);
    const live = this.#liveJob(record, work);
    if (options.callSession) {
      live.callSession = options.callSession;
      this.#bySession.set(options.callSession, live);
    }
    this.#jobs.set(id, record);
    this.#live.set(id, live);
    const { description, kind, request, pid, session } = record;
    await this.#writer?.append({ t: "created", id, ts: record.createdAt, kind, description, principal, session, request, pid }, { sync: true });
    await this.#publish(record);
    if (this.#local.hasSlot()) {
      this.#launch(live);
      return { id };
    }
    return { id, position: this.#local.enqueue(live) };
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
    return !this.#closed && !this.#draining && this.#local.hasSlot() && this.#local.waiting === 0;
  }

  /** The shared queue's side of this manager: its records, its journal, and running a job it took. */
  #sharedQueueOn(share: JobShare, maxWaitMs: number): SharedQueue {
    return new SharedQueue(
      {
        share,
        logger: this.logger,
        jobs: this.#jobs,
        live: this.#live,
        now: () => this.now(),
        journal: async (event) => {
          await this.#writer?.append(event, { sync: true });
        },
        publish: (record, options) => this.#publish(record, options),
        releasePlace: (principal, id) => this.#places?.release(principal, id),
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
    const { id, description, kind, request, pid, session, principal } = record;
    await this.#writer?.append({ t: "created", id, ts: record.createdAt, kind, description, principal, session, request, pid }, { sync: true });
    try {
      await (this.#shared as SharedQueue).add(queue, record, work);
      return { id };
    } catch (error) {
      // Redis down: the job needs no shared state to run, so it waits for a slot here, as calls that need none go on.
      this.logger.warn(`jobs: cannot queue ${id} in the shared queue (${(error as Error).message}); it waits for a slot on this instance.`);
      const live = this.#liveJob(record, work);
      this.#live.set(id, live);
      this.#local.enqueue(live);
      try {
        this.#checkQueueRoom(principal, live);
      } catch (refusal) {
        await this.#finish(live, "failed", { error: `${(error as Error).message} ${(refusal as Error).message}` });
        throw refusal;
      }
      this.#pump();
      return TERMINAL.has(record.status) || record.status === "running" ? { id } : { id, position: this.#local.position(id) ?? 0 };
    }
  }

  /** Runs a job taken from the shared queue (see SharedQueue); resolves when it ends here. */
  async #runTaken(record: JobRecord, { request, session, trace }: TakenJob): Promise<void> {
    const run = (this.#shared?.attached as { run: PortableRunner }).run;
    const { id, description, kind, principal, pid } = record;
    // Journaled before it is claimed: restarted before it starts, this instance hands it back (it never ran).
    await this.#writer?.append(
      { t: "created", id, ts: record.createdAt, kind, description, principal, session: record.session, request: record.request, pid, taken: true },
      { sync: true },
    );
    // Claimed before it starts: a taker that dies now leaves the record saying so, and the queue hands the job out again once
    // its lock lapses (the shared queue's check runs it then); once it started, it is never run again.
    await this.#publish(record);
    const live = this.#liveJob(record, {
      kind: record.kind,
      description: record.description,
      request,
      session,
      run: ({ signal, progress, job, jobRunMs }) =>
        run({ kind: record.kind, request }, { session, origin: "job", signal, progress, job, ...(jobRunMs !== undefined ? { jobRunMs } : {}) }),
    });
    live.origin = isCarrier(trace) ? trace : undefined;
    live.shared = true;
    live.taken = true;
    this.#jobs.set(id, record);
    this.#live.set(id, live);
    // The place the instance that queued it took (under its policy) is this one's to renew, and give back, now.
    if (this.#jobsAtOnce?.(session) !== undefined) this.#places?.hold(record.principal, id);
    // Taken in the instant the last slot filled: it waits here, first in line.
    if (this.#local.hasSlot()) this.#launch(live);
    else this.#local.enqueueFirst(live);
    await live.done;
  }

  #liveJob(record: JobRecord, work: BackgroundWork): LiveJob {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const share = this.#share;
    const { id, principal } = record;
    // With shared jobs every line also goes to Redis, bounded as a file is read, so any instance shows it to its owner.
    const mirror = share
      ? (line: string) => share.appendTranscript({ id, principal, line, maxBytes: MAX_TRANSCRIPT_BYTES, ttlMs: this.retentionOf(record) + SHARE_TTL_SLACK_MS })
      : undefined;
    const transcript = new TranscriptWriter(this.#transcriptFile(id), this.logger, mirror);
    return { record, work, controller: new AbortController(), transcript, done, resolve, seq: 0, progressWrittenAt: 0, origin: jobOrigin() };
  }

  /**
   * A job past the principal's jobs at once (running or waiting), as its policy sets them, is refused. With a
   * shared store they are counted on every instance together, and job `id` holds its place until it ends; a store
   * that does not answer refuses the job with its own sentence (the limit is never waived).
   */
  async #takePlace(session: SessionInfo, id: string): Promise<void> {
    const most = this.#jobsAtOnce?.(session);
    if (most === undefined) return;
    let held = 0;
    if (this.#places) {
      const place = await this.#places.take(session.principal, id, most);
      if (place.taken) return;
      held = place.held;
    } else {
      for (const job of this.#live.values()) if (job.record.principal === session.principal) held++;
      if (held < most) return;
    }
    throw new JobsError(
      "QUEUE_FULL",
      `Principal "${session.principal}" already has ${held} background jobs${this.#places ? " on the instances of this deployment" : ""}, as many as its policy allows at once (concurrentJobs: ${most}); wait for one to finish (jobs {action:"list"}) or cancel one (jobs {action:"cancel"}).`,
      { data: { limit: "concurrentJobs", max: most } },
    );
  }

  /** A job that would wait: refused when the queue is full, or when its principal already has its share waiting (`self` already in it not counted). */
  #checkQueueRoom(principal: string, self?: LiveJob): void {
    const others: JobRecord[] = [...this.#local.waitingRecords(self), ...(this.#shared?.waiting() ?? [])];
    if (others.length >= this.maxQueued) {
      throw new JobsError(
        "QUEUE_FULL",
        `The job queue is full (${this.maxQueued} waiting, ${this.maxConcurrent} running); wait for some to finish (jobs {action:"list"}) or cancel one (jobs {action:"cancel"}).`,
        { data: { limit: "maxQueued", max: this.maxQueued } },
      );
    }
    const share = this.#principalLimits[principal]?.jobs ?? this.maxQueuedPerPrincipal;
    let waiting = 0;
    for (const job of others) if (job.principal === principal) waiting++;
    if (waiting >= share) {
      throw new JobsError(
        "QUEUE_FULL",
        `Principal "${principal}" already has ${waiting} jobs waiting, its limit (waiting jobs per principal: ${share}); wait for some to finish (jobs {action:"list"}), cancel one (jobs {action:"cancel"}), or raise http.limits.perPrincipal.jobs in the config.`,
        { data: { limit: "jobsPerPrincipal", max: share } },
      );
    }
  }

  /** What the journal keeps of a request: redacted, or only its digest when no redactor was given. */
  #journaled(request: Record<string, unknown>): Record<string, unknown> {
    if (!this.#redactor) return { argsSha256: argsDigest(request) };
    return this.#redactor.value(boundedRequest(request), { keys: true }).value as Record<string, unknown>;
  }

  /** A line for the journal (a description, progress, an error) with secrets masked. */
  #mask(text: string): string {
    return this.#redactor ? this.#redactor.text(text).text : redactSecrets(text);
  }

  #launch(live: LiveJob): void {
    const { record } = live;
    this.#local.started(live);
    record.status = "running";
    record.startedAt = this.now();
    this.#bySignal.set(live.controller.signal, live);
    this.#shared?.roomChanged();
    void this.#writer?.append({ t: "started", id: record.id, ts: record.startedAt }, { sync: true });
    void this.#publish(record);
    if (!this.#closed) this.#cancels.watch();
    const progress = (value: Progress) => {
      this.#noteProgress(live, {
        ...(value.message !== undefined ? { message: this.#mask(oneLine(value.message, 200)) } : {}),
        progress: value.progress,
        ...(value.total !== undefined ? { total: value.total } : {}),
      });
    };
    const span = startJobSpan({ id: record.id, kind: record.kind, origin: live.origin, shared: live.shared === true });
    let run: Promise<ToolResult>;
    try {
      run = inJobSpan(span, () => live.work.run({ signal: live.controller.signal, progress, job: live.record.id, jobRunMs: this.#maxRunMs }));
    } catch (error) {
      run = Promise.reject(error);
    }
    run
      .then(
        (result) => this.#finish(live, result.isError ? "failed" : "completed", { result }),
        (error: unknown) => this.#finish(live, live.controller.signal.aborted ? "cancelled" : "failed", { error: errorText(error) }),
      )
      .finally(() => endJobSpan(span, record.status));
  }

  #noteProgress(live: LiveJob, update: Omit<JobProgress, "updates">, count = true): void {
    const { record } = live;
    if (TERMINAL.has(record.status)) return;
    record.progress = { ...record.progress, ...update, updates: (record.progress?.updates ?? 0) + (count ? 1 : 0) };
    const now = this.now();
    if (now - live.progressWrittenAt < PROGRESS_JOURNAL_MS) return;
    live.progressWrittenAt = now;
    void this.#writer?.append({ t: "progress", id: record.id, ts: now, progress: record.progress, toolCalls: record.toolCalls });
    void this.#publish(record);
  }

  async #finish(live: LiveJob, status: TerminalStatus, fields: { result?: ToolResult; error?: string; by?: string }): Promise<void> {
    const { record } = live;
    if (TERMINAL.has(record.status)) return;
    const { wasRunning, wasWaiting } = this.#local.remove(live);
    record.status = status;
    record.endedAt = this.now();
    this.#places?.release(record.principal, record.id);
    if (fields.error !== undefined) record.error = this.#mask(fields.error);
    if (fields.by !== undefined) record.by = fields.by;
    if (status !== "completed" && status !== "failed") live.controller.abort(new JobsError("BAD_REQUEST", `Job ${record.id} was ${status}.`));
    if (live.callSession) this.#bySession.delete(live.callSession);
    // The slot is free at once: a cancelled run that ignores its signal does not hold the queue up.
    if (wasRunning || wasWaiting) this.#pump();
    this.#shared?.roomChanged();
    let inline = fields.result;
    if (fields.result) {
      const json = JSON.stringify(fields.result);
      if (json.length > INLINE_RESULT_BYTES) {
        try {
          record.resultRef = await this.#files.writeResult(record.id, json);
          inline = undefined;
        } catch (error) {
          this.logger.warn(`jobs: cannot keep the result of ${record.id} in a file (${(error as Error).message}); it is kept in the journal line.`);
        }
      }
      record.result = fields.result;
    }
    await live.transcript.close();
    await this.#records?.shareLargeResult(record);
    await this.#writer?.append(
      {
        t: "end",
        id: record.id,
        ts: record.endedAt,
        status,
        toolCalls: record.toolCalls,
        inFlight: record.inFlight,
        ...(inline ? { result: inline } : {}),
        ...(record.resultRef ? { resultRef: record.resultRef } : {}),
        ...(record.error !== undefined ? { error: record.error } : {}),
        ...(record.by !== undefined ? { by: record.by } : {}),
        ...(record.progress ? { progress: record.progress } : {}),
      },
      { sync: true },
    );
    await this.#publish(record);
    this.#live.delete(record.id);
    live.resolve();
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

  /** Fills free slots, in the local queue's order. */
  #pump(): void {
    while (!this.#closed) {
      const next = this.#local.next();
      if (!next) return;
      this.#launch(next);
    }
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
    return this.#local.position(id);
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
    const stale = [...this.#jobs.values()].filter((j) => !TERMINAL.has(j.status) && !this.#live.has(j.id) && !this.#runsElsewhere(j) && !j.inSharedQueue);
    const now = this.now();
    if (stale.length === 0 || now - this.#refreshedAt < FOREIGN_REFRESH_MS) return;
    this.#refreshedAt = now;
    const loaded = await loadJournal(this.dir);
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

  /** True when the job runs in this process (false for a running job of another codemux process). */
  isLocal(id: string): boolean {
    return this.#live.has(id);
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
    for (const live of [...this.#live.values()]) if (live.record.principal === principal) await this.#finish(live, "cancelled", { by: "forget" });
    return this.#retention.forget(principal);
  }

  /** Cancels a queued or running job; a finished one is returned unchanged. Undefined when it is not this principal's. */
  async cancel(id: string, principal: string, by = "tool"): Promise<JobRecord | undefined> {
    await this.ready();
    const job = this.get(id, principal);
    if (!job) return undefined;
    const live = this.#live.get(id);
    if (live) await this.#finish(live, "cancelled", { by });
    else if (job.status === "queued" && this.#shared?.attached && !this.#runsElsewhere(job)) await this.#shared.cancel(job, by);
    // A job another instance runs hears it on the shared channel; another process on this folder picks up the file.
    else if (!TERMINAL.has(job.status) && this.#runsElsewhere(job)) await this.#share?.cancel(id, by);
    else if (!TERMINAL.has(job.status)) await requestCancel(this.dir, id, by);
    return job;
  }

  /** Waits until every listed job ends, the time passes or the signal aborts. */
  async wait(ids: string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    if (this.#share && ids.some((id) => this.#remoteRunning(id))) return this.#waitShared(ids, options);
    const pending = ids.map((id) => this.#live.get(id)?.done).filter((p): p is Promise<void> => p !== undefined);
    if (pending.length === 0 || options.timeoutMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    await Promise.race([
      Promise.all(pending),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, options.timeoutMs);
        onAbort = resolve;
        options.signal?.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
  }

  #runsElsewhere(job: JobRecord): boolean {
    return this.#share !== undefined && job.instance !== undefined && job.instance !== this.#share.instanceId;
  }

  #remoteRunning(id: string): boolean {
    const job = this.#jobs.get(id);
    return job !== undefined && !this.#live.has(id) && !TERMINAL.has(job.status);
  }

  /** Waits for jobs other instances run by reading their shared records again (every half second), within the same bounds. */
  async #waitShared(ids: string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const until = this.now() + options.timeoutMs;
    const principals = new Set(ids.flatMap((id) => this.#jobs.get(id)?.principal ?? []));
    while (this.now() < until && !options.signal?.aborted) {
      const live = ids.map((id) => this.#live.get(id)?.done).filter((p): p is Promise<void> => p !== undefined);
      if (live.length === 0 && !ids.some((id) => this.#remoteRunning(id))) return;
      await new Promise((resolve) => setTimeout(resolve, SHARED_WAIT_POLL_MS));
      // The shared store away for a moment (Redis restarting) is no answer: wait on, within the same bounds.
      for (const principal of principals)
        await this.refreshShared(principal).catch((error: unknown) => {
          if (!isSharedStateDown(error)) throw error;
        });
    }
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
    if (!this.#share || !this.#runsElsewhere(job)) return readTranscript(this.#transcriptFile(job.id));
    try {
      return parseTranscript(await this.#share.transcript(job.id, job.principal), false);
    } catch (error) {
      return { entries: [], skipped: 0, truncated: false, error: (error as Error).message };
    }
  }

  #transcriptFile(id: string): string {
    return this.#files.transcriptFile(id);
  }

  /** Appends to a live job's transcript (the agent journals its turns this way). */
  note(id: string, entry: Parameters<TranscriptWriter["append"]>[0]): void {
    void this.#live.get(id)?.transcript.append(entry);
  }

  /**
   * The job a downstream call belongs to, if any: by the job's own signal (call_tool), its own
   * session (the agent), or, for a snippet's inner calls, by asking the call's progress sink (it is
   * the job's when the snippet runs in the background). Foreground calls belong to none.
   */
  jobForCall(ctx: Pick<CallContext, "signal" | "session" | "origin" | "progress"> & { job?: string | undefined }): string | undefined {
    if (ctx.job !== undefined) return this.#live.has(ctx.job) ? ctx.job : undefined;
    if (ctx.signal) {
      const bySignal = this.#bySignal.get(ctx.signal);
      if (bySignal) return bySignal.record.id;
    }
    const bySession = this.#bySession.get(ctx.session.id);
    return bySession?.record.id;
  }

  /** Runs one tool call of a job and writes it to the job's transcript. */
  async recordCall<T extends ToolResult>(id: string, call: { tool: string; args: unknown; origin: string }, run: () => Promise<T>): Promise<T> {
    const live = this.#live.get(id);
    if (!live) return run();
    const seq = live.seq++;
    const digest = argsDigest(call.args);
    const { record } = live;
    this.#noteProgress(live, { message: callLine(call.tool, call.args, (text) => this.#mask(text)) }, false);
    // Written before the call goes out: after a crash, a call with no end line is known to have been in flight.
    await live.transcript.append({ ts: this.now(), type: "call_start", seq, tool: call.tool, argsSha256: digest });
    record.inFlight++;
    const started = performance.now();
    let outcome: "ok" | "error" | "threw" = "threw";
    let size = { bytes: 0, estimatedTokens: 0 };
    try {
      const result = await run();
      outcome = result.isError ? "error" : "ok";
      size = resultSize(result);
      return result;
    } finally {
      record.inFlight--;
      record.toolCalls++;
      void live.transcript.append({
        ts: this.now(),
        type: "call",
        seq,
        tool: call.tool,
        argsSha256: digest,
        durationMs: Math.round(performance.now() - started),
        outcome,
        ...size,
        origin: call.origin,
      });
    }
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
    const queued = this.#local.waitingJobs();
    await Promise.all(queued.map((job) => this.#handBack(job)));
  }

  async #handBack(live: LiveJob): Promise<void> {
    const shared = this.#shared;
    const queue = shared?.attached?.queue;
    // A job taken from the shared queue is held there as this instance's until it ends: it ends here, saying so.
    if (live.taken) return this.#finish(live, "interrupted", { by: "drain", error: TAKEN_STOPPED });
    if (shared && queue && portable(live.work)) {
      this.#local.remove(live);
      this.#live.delete(live.record.id);
      // A Redis just back may not have the queue's connection up yet: the drain's budget allows a few tries before giving up.
      const giveUpAt = Date.now() + HAND_BACK_WAIT_MS;
      for (;;) {
        try {
          await shared.add(queue, live.record, live.work);
          await live.transcript.close();
          live.resolve();
          return;
        } catch (error) {
          if (Date.now() < giveUpAt) {
            await new Promise((resolve) => setTimeout(resolve, HAND_BACK_RETRY_MS));
            continue;
          }
          this.logger.warn(`jobs: cannot hand ${live.record.id} to the shared queue (${(error as Error).message}); it ends interrupted.`);
          this.#live.set(live.record.id, live);
          break;
        }
      }
    }
    await this.#finish(live, "interrupted", { by: "drain", error: "codemux stopped before this job started; it never ran: submit it again." });
  }

  /** Stops taking jobs; jobs still running here are aborted and journaled `interrupted`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    // A journal never opened has nothing to close (and is not opened now).
    await this.#opening?.catch(() => undefined);
    this.#closed = true;
    this.#cancels.stop();
    this.#retention.stop();
    this.#places?.close();
    this.#shared?.close();
    this.#records?.close();
    const live = [...this.#live.values()];
    await Promise.all(
      live.map((job) => {
        job.record.inFlight = Math.max(0, job.record.inFlight);
        return this.#finish(job, "interrupted", {
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

export type { PortableRunner } from "./portable";
