import { isSharedStateDown, type BackgroundWork, type JobQueue, type JobShare, type Logger, type SessionInfo } from "@codemux/core";
import { seconds } from "./format";
import type { LiveJob } from "./live-job";
import { PORTABLE_KINDS, type PortableRunner, type QueuedPayload } from "./portable";
import { SHARE_TTL_SLACK_MS } from "./shared-records";
import { jobOrigin } from "./tracing";
import { pollUntil, type WaitBounds } from "./waits";
import { TERMINAL, type JobRecord, type JournalEvent } from "./types";

const TAKEN_NEVER_RAN =
  "No codemux instance ran this job: the instance that took it from the shared queue stopped before starting it; it never ran: submit it again.";
/** How long a drain keeps trying to hand a queued job back to the shared queue (a Redis just back, its queue connection not yet), and the pause between tries: well inside serve's 30 s drain. */
const HAND_BACK_WAIT_MS = 10_000;
const HAND_BACK_RETRY_MS = 250;
const SHARED_WAIT_POLL_MS = 500;
/** A principal's jobs read from the shared records at most. */
const MAX_SHARED_LISTED = 200;
/** Ids of one `jobs` request read from the share one by one at most (output takes 20). */
const MAX_IDS_READ = 20;

/** What a taken job's payload carries besides its record: its request, its session (without its peer), the trace it links to. */
export interface TakenJob {
  request: Record<string, unknown>;
  session: SessionInfo;
  trace: unknown;
}

/** The work of a job taken from the shared queue: its request, run by this instance's runner in the job's own session. */
export function takenWork(record: JobRecord, { request, session }: TakenJob, run: PortableRunner): BackgroundWork {
  return {
    kind: record.kind,
    description: record.description,
    request,
    session,
    run: ({ signal, progress, job, jobRunMs }) =>
      run({ kind: record.kind, request }, { session, origin: "job", signal, progress, job, ...(jobRunMs !== undefined ? { jobRunMs } : {}) }),
  };
}

/** What the shared queue needs of the job manager: its records, its journal, and running a job it took. */
export interface SharedQueueHost {
  readonly share: JobShare;
  readonly logger: Logger;
  readonly jobs: Map<string, JobRecord>;
  readonly live: ReadonlyMap<string, LiveJob>;
  now(): number;
  /** Appends to this instance's journal, synced. */
  journal(event: JournalEvent): Promise<void>;
  publish(record: JobRecord, options?: { strict?: boolean }): Promise<void>;
  releasePlace(principal: string, id: string): void;
  retentionOf(job: JobRecord): number;
  runsElsewhere(job: JobRecord): boolean;
  /** Runs a job taken from the shared queue here (claimed and journaled first); resolves when it ends. */
  runTaken(record: JobRecord, taken: TakenJob): Promise<void>;
}

/**
 * The shared queue (Redis) as one instance sees it: portable jobs that find their instance full wait
 * there, each watched by the instance that queued it until one takes it or its wait is over; this
 * instance takes queued jobs (its own or others') while it has room.
 */
export class SharedQueue {
  readonly #host: SharedQueueHost;
  readonly maxWaitMs: number;
  #attached: { queue: JobQueue; run: PortableRunner } | undefined;
  /** Jobs this instance put in the shared queue, each with the timer that ends it if no instance takes it in time. */
  readonly #waitTimers = new Map<string, NodeJS.Timeout>();

  constructor(host: SharedQueueHost, options: { maxWaitMs: number }) {
    this.#host = host;
    this.maxWaitMs = options.maxWaitMs;
  }

  /** The queue and the runner of taken jobs, once `attach` gave them. */
  get attached(): { queue: JobQueue; run: PortableRunner } | undefined {
    return this.#attached;
  }

  attach(queue: JobQueue, run: PortableRunner, work: { concurrency: number; hasRoom: () => boolean }): void {
    this.#attached = { queue, run };
    queue.work({ ...work, run: (id, payload) => this.#take(id, payload) });
  }

  roomChanged(): void {
    this.#attached?.queue.roomChanged();
  }

  /** Waits for jobs other instances run by reading their shared records again (every half second), until `ended`, the time passes or the signal aborts. */
  async waitElsewhere(ids: string[], ended: () => boolean, bounds: WaitBounds): Promise<void> {
    const principals = new Set(ids.flatMap((id) => this.#host.jobs.get(id)?.principal ?? []));
    const refresh = async () => {
      // The shared store away for a moment (Redis restarting) is no answer: wait on, within the same bounds.
      for (const principal of principals)
        await this.refresh(principal, []).catch((error: unknown) => {
          if (!isSharedStateDown(error)) throw error;
        });
    };
    await pollUntil(ended, refresh, { ...bounds, everyMs: SHARED_WAIT_POLL_MS, now: () => this.#host.now() });
  }

  /** Puts a job queued here back in the shared queue at a drain, trying again for a while; rejects with the last error once that is over. */
  async handBack(queue: JobQueue, record: JobRecord, work: BackgroundWork): Promise<void> {
    // A Redis just back may not have the queue's connection up yet: the drain's budget allows a few tries before giving up.
    const giveUpAt = Date.now() + HAND_BACK_WAIT_MS;
    for (;;) {
      try {
        return await this.add(queue, record, work);
      } catch (error) {
        if (Date.now() >= giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, HAND_BACK_RETRY_MS));
      }
    }
  }

  /**
   * Puts a job in the shared queue: its record (published first, so a taker's own record is never
   * overwritten by this one) says so, and a timer ends it if no instance takes it within the bound.
   */
  async add(queue: JobQueue, record: JobRecord, work: BackgroundWork): Promise<void> {
    const host = this.#host;
    record.status = "queued";
    record.inSharedQueue = true;
    // The session goes without its peer: the taking instance has no connection to this client.
    const { peer: _peer, ...sessionInfo } = work.session;
    const origin = jobOrigin();
    const payload: QueuedPayload = { record, request: work.request, session: sessionInfo, ...(origin ? { trace: origin } : {}) };
    try {
      // Its record first, so a taker finds it waiting; a taker that finds no record runs nothing.
      await host.publish(record, { strict: true });
      await queue.add({ id: record.id, payload: JSON.stringify(payload) });
    } catch (error) {
      delete record.inSharedQueue;
      // Published as waiting but not queued: the record says otherwise again (rewritten until Redis takes it).
      void host.publish(record);
      throw error;
    }
    // Journaled before the client hears of it: a restart of this instance then leaves the job to whichever instance took it.
    await host.journal({ t: "handed", id: record.id, ts: host.now() });
    this.watch(record);
  }

  /** Ends a job waiting in the shared queue once it is past its bound, unless an instance took it. */
  watch(record: JobRecord, atLeastMs = 0): void {
    clearTimeout(this.#waitTimers.get(record.id));
    const timer = setTimeout(() => void this.expire(record), Math.max(atLeastMs, record.createdAt + this.maxWaitMs - this.#host.now()));
    timer.unref();
    this.#waitTimers.set(record.id, timer);
  }

  /** A job no instance took within the bound: out of the shared queue, ended failed for every instance to see. A taken one is left alone. */
  async expire(record: JobRecord): Promise<void> {
    this.#waitTimers.delete(record.id);
    if (!this.#attached || TERMINAL.has(record.status)) return;
    const removed = await this.#attached.queue.remove(record.id).catch(() => undefined);
    if (removed) return this.endNeverRan(record, "failed", { error: this.waitedTooLong() });
    // Redis did not answer (down, or past the store's bound on a loaded machine): asked again shortly, never left waiting unbounded.
    if (removed === undefined) return this.watch(record, SHARED_WAIT_POLL_MS);
    // Not taken out here: an instance took it, and its record says so from the moment it claims it. A record still waiting in
    // the queue means no instance claimed it (a removal of ours Redis ran after its answer was given up, seen in CI, or a queue
    // Redis lost); one claimed by an instance no longer running means that one stopped before starting it. No one runs it.
    const text = await this.#host.share.get(record.id).catch(() => null);
    // Its record not read (Redis away again, or written in a format this instance cannot read): asked again, as above.
    if (text === null) return this.watch(record, SHARED_WAIT_POLL_MS);
    const shared = text === undefined ? undefined : (JSON.parse(text) as JobRecord);
    if (shared && !(shared.status === "queued" && (shared.inSharedQueue || !(await this.#claimerAlive(shared))))) return;
    const claimed = shared !== undefined && !shared.inSharedQueue;
    await this.endNeverRan(record, "failed", { error: claimed ? TAKEN_NEVER_RAN : this.waitedTooLong() });
  }

  /** Whether the instance that claimed a job (taken, not started) still runs; true when it cannot be told. */
  async #claimerAlive(record: JobRecord): Promise<boolean> {
    if (record.instance === undefined) return false;
    return this.#host.share.alive(record.instance).catch(() => true);
  }

  waitedTooLong(): string {
    return `No codemux instance had room for this job within ${seconds(this.maxWaitMs)}; it never ran: submit it again when fewer jobs run.`;
  }

  /** Runs a job another instance (or this one) queued; resolves when it ends here. */
  async #take(id: string, text: string): Promise<void> {
    const host = this.#host;
    let payload: QueuedPayload | undefined;
    try {
      payload = JSON.parse(text) as QueuedPayload;
    } catch {
      payload = undefined;
    }
    const { record: queued, request, session, trace } = payload ?? ({} as Partial<QueuedPayload>);
    if (!queued || !request || !session || queued.id !== id || queued.principal !== session.principal || !PORTABLE_KINDS.has(queued.kind)) {
      // Its record must not stay "queued": it ends, with why, where its id and principal can be told (else the queuer's bound ends it).
      if (queued?.id === id && typeof queued.principal === "string") {
        const error = "The codemux instance that took this job from the shared queue could not read its request; it never ran: submit it again.";
        await this.endNeverRan({ ...queued, instance: host.share.instanceId } as JobRecord, "failed", { error, journal: false });
      }
      return;
    }
    // Here already: its queuer's own run (its add looked failed), or taken before and handed out again.
    if (host.live.has(id)) return;
    if (!(await this.#mayTake(queued))) return;
    const { inSharedQueue: _waited, ...rest } = queued;
    const record: JobRecord = { ...rest, pid: process.pid, instance: host.share.instanceId, status: "queued", toolCalls: 0, inFlight: 0 };
    // Taken past its bound (the instance that queued it, whose timer would end it, is gone): it ends unrun.
    if (host.now() - record.createdAt > this.maxWaitMs) {
      await this.endNeverRan(record, "failed", { error: this.waitedTooLong(), journal: false });
      return;
    }
    await host.runTaken(record, { request, session, trace });
  }

  /**
   * Whether a job handed out by the shared queue is to run here, by its record: waiting, or taken by an instance that stopped
   * before it started it (gone, or this one restarted). Not one that started anywhere, ended, or is gone (forgotten): the queue
   * hands a job out again when its taker's lock lapses (it died, or Redis was away), and a started job never runs twice.
   * A record that cannot be read (Redis away again) does not hold the job up.
   */
  async #mayTake(queued: JobRecord): Promise<boolean> {
    const share = this.#host.share;
    let text: string | undefined;
    try {
      text = await share.get(queued.id);
    } catch {
      return true;
    }
    const shared = text === undefined ? undefined : (JSON.parse(text) as JobRecord);
    if (!shared || shared.principal !== queued.principal || shared.status !== "queued") return false;
    if (shared.inSharedQueue || shared.instance === undefined || shared.instance === share.instanceId) return true;
    return !(await share.alive(shared.instance).catch(() => true));
  }

  /** The jobs this instance put in the shared queue that still wait there, as their records last said; the others' timers go. */
  waiting(): JobRecord[] {
    const waiting: JobRecord[] = [];
    for (const [id, timer] of this.#waitTimers) {
      const job = this.#host.jobs.get(id);
      if (job?.status === "queued" && job.inSharedQueue) waiting.push(job);
      else {
        clearTimeout(timer);
        this.#waitTimers.delete(id);
      }
    }
    return waiting;
  }

  /** Cancels a job still waiting in the shared queue: out it goes; taken meanwhile, the instance that took it hears the cancel. */
  async cancel(job: JobRecord, by: string): Promise<void> {
    if (await this.#attached?.queue.remove(job.id)) await this.endNeverRan(job, "cancelled", { by });
    else await this.#host.share.cancel(job.id, by);
  }

  /** A job out of the shared queue before any instance ran it (cancelled, or past its wait): ended here, for every instance to see. */
  async endNeverRan(job: JobRecord, status: "cancelled" | "failed", fields: { by?: string; error?: string; journal?: boolean }): Promise<void> {
    const host = this.#host;
    clearTimeout(this.#waitTimers.get(job.id));
    this.#waitTimers.delete(job.id);
    delete job.inSharedQueue;
    job.status = status;
    job.endedAt = host.now();
    host.releasePlace(job.principal, job.id);
    if (fields.by !== undefined) job.by = fields.by;
    if (fields.error !== undefined) job.error = fields.error;
    host.jobs.set(job.id, job);
    const { by, error, journal = !host.runsElsewhere(job) } = fields;
    // Only the journal that has the job's creation gets its end: another instance's job is told through the share alone.
    if (journal)
      await host.journal({
        t: "end",
        id: job.id,
        ts: job.endedAt,
        status,
        toolCalls: 0,
        inFlight: 0,
        ...(by !== undefined ? { by } : {}),
        ...(error !== undefined ? { error } : {}),
      });
    await host.publish(job);
  }

  /**
   * A job a previous run of this instance took from the shared queue and stopped before starting: its record says it waits
   * again (unless it moved on meanwhile), and the queue hands it out once that run's lock lapses.
   */
  async handBackTaken(job: JobRecord): Promise<void> {
    const share = this.#host.share;
    const text = await share.get(job.id);
    const shared = text === undefined ? undefined : (JSON.parse(text) as JobRecord);
    if (!shared || shared.principal !== job.principal || shared.status !== "queued" || shared.inSharedQueue || shared.instance !== share.instanceId) return;
    const ttlMs = this.#host.retentionOf(shared) + SHARE_TTL_SLACK_MS;
    const back: JobRecord = { ...shared, inSharedQueue: true };
    await share.put({ id: job.id, principal: job.principal, createdAt: job.createdAt, record: JSON.stringify(back), ttlMs });
  }

  /** A job a previous run of this instance handed to the shared queue: its shared record is the truth; still waiting, it is watched again. */
  async adoptHanded(job: JobRecord): Promise<void> {
    const host = this.#host;
    job.instance = host.share.instanceId;
    const text = await host.share.get(job.id).catch(() => undefined);
    const shared = text === undefined ? undefined : (JSON.parse(text) as JobRecord);
    if (shared && shared.id === job.id && shared.principal === job.principal && !host.live.has(job.id)) host.jobs.set(job.id, shared);
    const now = shared ?? job;
    if (now.status === "queued" && now.inSharedQueue) this.watch(now);
  }

  /**
   * The records of `principal`'s jobs that other instances run, brought up to date; one whose
   * instance is gone is `interrupted`. Jobs this instance runs are its own to tell.
   */
  async refresh(principal: string, ids: string[]): Promise<void> {
    const host = this.#host;
    const share = host.share;
    const now = host.now();
    const texts = await share.list(principal, MAX_SHARED_LISTED);
    // Asked for by id, a job older than the listed ones (or one this instance never heard of) is read by its own key.
    const listed = new Set(texts.map((text) => (JSON.parse(text) as JobRecord).id));
    for (const id of ids.slice(0, MAX_IDS_READ)) {
      const known = host.jobs.get(id);
      if (listed.has(id) || host.live.has(id) || (known && TERMINAL.has(known.status))) continue;
      const text = await share.get(id);
      if (text !== undefined) texts.push(text);
    }
    for (const text of texts) {
      const record = JSON.parse(text) as JobRecord;
      const waiting = record.status === "queued" && record.inSharedQueue === true;
      if (record.principal !== principal || typeof record.id !== "string" || !(host.runsElsewhere(record) || waiting)) continue;
      // A job taken here from the shared queue may still have its queuer's record in Redis for an instant: this instance's own is the truth.
      if (host.live.has(record.id)) continue;
      // Waiting in the shared queue, it belongs to no instance yet (the one that queued it may be gone); past its bound it ends.
      // Taken but not started (its taker may have stopped: the queue hands it out again), it too ends past its bound.
      if (record.status === "queued") {
        if (now - record.createdAt > this.maxWaitMs) await this.expire(record);
      } else if (!TERMINAL.has(record.status) && (record.instance === undefined || !(await share.alive(record.instance)))) {
        record.status = "interrupted";
        record.endedAt = now;
        record.error = `the codemux instance that ran this job (${record.instance ?? "unknown"}) is gone; ${record.toolCalls} call(s) had completed.`;
        await host.publish(record);
      }
      host.jobs.set(record.id, record);
    }
  }

  close(): void {
    for (const timer of this.#waitTimers.values()) clearTimeout(timer);
    this.#waitTimers.clear();
  }
}
