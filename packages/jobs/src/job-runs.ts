import { oneLine, type BackgroundWork, type Logger, type CallContext, type Progress, type ToolResult } from "@codemux/core";
import type { Admission } from "./admission";
import { JobsError } from "./errors";
import type { JobFiles } from "./job-files";
import type { JobTranscripts } from "./job-transcripts";
import type { JournalWriter } from "./journal";
import type { JournalMask } from "./journal-mask";
import type { LiveJob } from "./live-job";
import { LocalQueue } from "./local-queue";
import { errorText } from "./portable";
import type { SharedRecords } from "./shared-records";
import { endJobSpan, inJobSpan, jobOrigin, startJobSpan } from "./tracing";
import { TERMINAL, type JobProgress, type JobRecord, type JournalEvent, type TerminalStatus } from "./types";

/** Progress lines are journaled at most this often per job (the last one is always in the end line). */
const PROGRESS_JOURNAL_MS = 1_000;

/** What running jobs needs of the job manager. */
export interface JobRunsHost {
  readonly maxConcurrent: number;
  /** How long a running snippet job may wait on tools. */
  readonly maxRunMs: number;
  readonly mask: JournalMask;
  readonly files: JobFiles;
  readonly transcripts: JobTranscripts;
  readonly admission: Admission;
  readonly records: SharedRecords | undefined;
  readonly logger: Logger;
  now(): number;
  /** This process's journal segment, once open. */
  writer(): JournalWriter | undefined;
  publish(record: JobRecord): Promise<void>;
  /** A slot was taken or freed (the shared queue takes jobs while there is room). */
  roomChanged(): void;
  /** A job started: cancel requests of `codemux jobs cancel` are watched for. */
  started(): void;
  closed(): boolean;
}

/** The jobs this process runs or queues: their start, progress and end, each journaled and published. */
export class JobRuns {
  readonly live = new Map<string, LiveJob>();
  readonly local: LocalQueue<LiveJob>;
  readonly #bySignal = new WeakMap<AbortSignal, LiveJob>();
  readonly #bySession = new Map<string, LiveJob>();
  readonly #host: JobRunsHost;

  constructor(host: JobRunsHost) {
    this.#host = host;
    this.local = new LocalQueue(host.maxConcurrent);
  }

  /** A job to run here, known as live from now on; `callSession` is the session its inner calls carry (the agent's own). */
  add(record: JobRecord, work: BackgroundWork, callSession?: string): LiveJob {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const transcript = this.#host.transcripts.writer(record);
    const live: LiveJob = { record, work, controller: new AbortController(), transcript, done, resolve, seq: 0, progressWrittenAt: 0, origin: jobOrigin() };
    if (callSession) {
      live.callSession = callSession;
      this.#bySession.set(callSession, live);
    }
    this.live.set(record.id, live);
    return live;
  }

  launch(live: LiveJob): void {
    const host = this.#host;
    const { record } = live;
    this.local.started(live);
    record.status = "running";
    record.startedAt = host.now();
    this.#bySignal.set(live.controller.signal, live);
    host.roomChanged();
    void host.writer()?.append({ t: "started", id: record.id, ts: record.startedAt }, { sync: true });
    void host.publish(record);
    if (!host.closed()) host.started();
    const progress = (value: Progress) => {
      this.noteProgress(live, {
        ...(value.message !== undefined ? { message: host.mask.text(oneLine(value.message, 200)) } : {}),
        progress: value.progress,
        ...(value.total !== undefined ? { total: value.total } : {}),
      });
    };
    const span = startJobSpan({ id: record.id, kind: record.kind, origin: live.origin, shared: live.shared === true });
    let run: Promise<ToolResult>;
    try {
      run = inJobSpan(span, () => live.work.run({ signal: live.controller.signal, progress, job: live.record.id, jobRunMs: host.maxRunMs }));
    } catch (error) {
      run = Promise.reject(error);
    }
    run
      .then(
        (result) => this.finish(live, result.isError ? "failed" : "completed", { result }),
        (error: unknown) => this.finish(live, live.controller.signal.aborted ? "cancelled" : "failed", { error: errorText(error) }),
      )
      .finally(() => endJobSpan(span, record.status));
  }

  noteProgress(live: LiveJob, update: Omit<JobProgress, "updates">, count = true): void {
    const { record } = live;
    if (TERMINAL.has(record.status)) return;
    record.progress = { ...record.progress, ...update, updates: (record.progress?.updates ?? 0) + (count ? 1 : 0) };
    const now = this.#host.now();
    if (now - live.progressWrittenAt < PROGRESS_JOURNAL_MS) return;
    live.progressWrittenAt = now;
    void this.#host.writer()?.append({ t: "progress", id: record.id, ts: now, progress: record.progress, toolCalls: record.toolCalls });
    void this.#host.publish(record);
  }

  async finish(live: LiveJob, status: TerminalStatus, fields: { result?: ToolResult; error?: string; by?: string }): Promise<void> {
    const host = this.#host;
    const { record } = live;
    if (TERMINAL.has(record.status)) return;
    const { wasRunning, wasWaiting } = this.local.remove(live);
    record.status = status;
    const endedAt = host.now();
    record.endedAt = endedAt;
    host.admission.release(record.principal, record.id);
    if (fields.error !== undefined) record.error = host.mask.text(fields.error);
    if (fields.by !== undefined) record.by = fields.by;
    if (status !== "completed" && status !== "failed") live.controller.abort(new JobsError("BAD_REQUEST", `Job ${record.id} was ${status}.`));
    if (live.callSession) this.#bySession.delete(live.callSession);
    // The slot is free at once: a cancelled run that ignores its signal does not hold the queue up.
    if (wasRunning || wasWaiting) this.pump();
    host.roomChanged();
    let inline: ToolResult | undefined;
    if (fields.result) {
      inline = await host.files.keep(record, fields.result, host.logger);
      record.result = fields.result;
    }
    await live.transcript.close();
    await host.records?.shareLargeResult(record);
    await host.writer()?.append(endLine(record, { status, ts: endedAt, inline }), { sync: true });
    await host.publish(record);
    this.live.delete(record.id);
    live.resolve();
  }

  /** Fills free slots, in the local queue's order. */
  pump(): void {
    while (!this.#host.closed()) {
      const next = this.local.next();
      if (!next) return;
      this.launch(next);
    }
  }

  /** The live job a call belongs to: by the job's own signal (call_tool) or its own session (the agent). */
  forCall(ctx: Pick<CallContext, "signal" | "session">): LiveJob | undefined {
    const bySignal = ctx.signal ? this.#bySignal.get(ctx.signal) : undefined;
    return bySignal ?? this.#bySession.get(ctx.session.id);
  }
}

/** A job's end line: what it ended as, its counts, and its result when small enough to go inline. */
function endLine(record: JobRecord, { status, ts, inline }: { status: TerminalStatus; ts: number; inline: ToolResult | undefined }): JournalEvent {
  return {
    t: "end",
    id: record.id,
    ts,
    status,
    toolCalls: record.toolCalls,
    inFlight: record.inFlight,
    ...(inline ? { result: inline } : {}),
    ...(record.resultRef ? { resultRef: record.resultRef } : {}),
    ...(record.error !== undefined ? { error: record.error } : {}),
    ...(record.by !== undefined ? { by: record.by } : {}),
    ...(record.progress ? { progress: record.progress } : {}),
  };
}
