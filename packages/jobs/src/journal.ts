import type { Logger } from "@codemux/core";
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes, writeFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { TERMINAL, type JobRecord, type JournalEvent } from "./types";

/** A live process touches its segment this often; a segment untouched for STALE_MS is dead even if its pid was reused. */
export const HEARTBEAT_MS = 30_000;
const STALE_MS = 4 * HEARTBEAT_MS;
/** Results larger than this go to their own file, so journal lines stay small and the journal opens fast. */
export const INLINE_RESULT_BYTES = 64 * 1024;
const LOCK_STALE_MS = 60_000;

/** The folders under `<dataDir>/jobs/`. */
export function journalPaths(dir: string) {
  return {
    dir,
    segments: join(dir, "segments"),
    transcripts: join(dir, "transcripts"),
    results: join(dir, "results"),
    cancel: join(dir, "cancel"),
    lock: join(dir, "compact.lock"),
  };
}

export interface SegmentInfo {
  file: string;
  pid: number;
  startedAt: number;
  mtimeMs: number;
  compacted: boolean;
}

export interface LoadedJournal {
  jobs: Map<string, JobRecord>;
  segments: SegmentInfo[];
  /** Lines that could not be read (a torn tail after a crash, a hand edit): skipped, counted per file. */
  skipped: Array<{ file: string; lines: number }>;
}

/** Reads every segment and folds its events into job records; never throws on bad content. */
export async function loadJournal(dir: string, options: { logger?: Logger } = {}): Promise<LoadedJournal> {
  const paths = journalPaths(dir);
  const names = (await readdir(paths.segments).catch(() => [] as string[])).filter((n) => n.endsWith(".jsonl")).sort();
  const jobs = new Map<string, JobRecord>();
  const segments: SegmentInfo[] = [];
  const skipped: LoadedJournal["skipped"] = [];
  for (const name of names) {
    const file = join(paths.segments, name);
    let text: string;
    let mtimeMs: number;
    try {
      [text, mtimeMs] = await Promise.all([readFile(file, "utf8"), stat(file).then((s) => s.mtimeMs)]);
    } catch (error) {
      options.logger?.warn(`jobs: cannot read journal segment ${file} (${(error as Error).message}); skipped.`);
      continue;
    }
    const info: SegmentInfo = { file, pid: -1, startedAt: 0, mtimeMs, compacted: name.includes("-compact-") };
    let bad = 0;
    for (const line of text.split("\n")) {
      if (line.length === 0) continue;
      const event = parseLine(line);
      if (!event) {
        bad++;
        continue;
      }
      if (event.t === "segment") {
        info.pid = event.pid;
        info.startedAt = event.startedAt;
      } else fold(jobs, event);
    }
    segments.push(info);
    if (bad > 0) {
      skipped.push({ file, lines: bad });
      options.logger?.warn(`jobs: skipped ${bad} unreadable line(s) in ${file} (a torn write from a crash, or an edit); the rest of the journal is used.`);
    }
  }
  return { jobs, segments, skipped };
}

function parseLine(line: string): JournalEvent | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    if (typeof value !== "object" || value === null) return undefined;
    const event = value as { t?: unknown; id?: unknown };
    if (event.t === "segment") return value as JournalEvent;
    if (typeof event.t !== "string" || typeof event.id !== "string") return undefined;
    return value as JournalEvent;
  } catch {
    return undefined;
  }
}

/** Applies one event; order-independent enough for events of one job spread over several segments (terminal wins). */
export function fold(jobs: Map<string, JobRecord>, event: Exclude<JournalEvent, { t: "segment" }>): void {
  let job = jobs.get(event.id);
  if (!job) {
    job = {
      id: event.id,
      kind: "unknown",
      description: "",
      principal: "",
      session: "",
      request: {},
      pid: 0,
      createdAt: event.ts,
      status: "queued",
      toolCalls: 0,
      inFlight: 0,
    };
    jobs.set(event.id, job);
  }
  const terminal = TERMINAL.has(job.status);
  switch (event.t) {
    case "created":
      Object.assign(job, {
        kind: event.kind,
        description: event.description,
        principal: event.principal,
        session: event.session,
        request: event.request,
        pid: event.pid,
        createdAt: event.ts,
      });
      // Created again here: this process took the job (back) from the shared queue.
      delete job.inSharedQueue;
      if (event.taken) job.taken = true;
      break;
    case "handed":
      if (!terminal) job.inSharedQueue = true;
      break;
    case "started":
      job.startedAt = event.ts;
      delete job.inSharedQueue;
      if (!terminal) job.status = "running";
      break;
    case "progress":
      if (!terminal) {
        job.progress = event.progress;
        job.toolCalls = event.toolCalls;
      }
      break;
    case "end":
      if (terminal) break;
      job.status = event.status;
      job.endedAt = event.ts;
      job.toolCalls = event.toolCalls;
      job.inFlight = event.inFlight ?? 0;
      if (event.result) job.result = event.result;
      if (event.resultRef) job.resultRef = event.resultRef;
      if (event.error !== undefined) job.error = event.error;
      if (event.by !== undefined) job.by = event.by;
      if (event.progress) job.progress = event.progress;
      break;
  }
}

/** Is the process that wrote this segment still running it? Dead pids, reused pids (stale heartbeat) and our own old segments are not. */
export function segmentAlive(segment: SegmentInfo, now: number): boolean {
  if (segment.compacted || segment.pid <= 0) return false;
  if (now - segment.mtimeMs > STALE_MS) return false;
  if (segment.pid === process.pid) return false;
  try {
    process.kill(segment.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * This process's append-only segment of the journal. One writer per file (no locks, no native
 * dependency); lines are appended in order and fsynced when a caller asks (status changes).
 */
export class JournalWriter {
  readonly file: string;
  #handle: Promise<FileHandle | undefined>;
  #tail: Promise<void> = Promise.resolve();
  #failed = false;
  #heartbeat: NodeJS.Timeout | undefined;

  private constructor(
    file: string,
    handle: Promise<FileHandle | undefined>,
    readonly logger: Logger,
  ) {
    this.file = file;
    this.#handle = handle;
  }

  static async open(dir: string, options: { logger: Logger; now: number }): Promise<JournalWriter> {
    const paths = journalPaths(dir);
    const name = `${String(options.now).padStart(15, "0")}-${process.pid}-${randomBytes(3).toString("hex")}.jsonl`;
    const file = join(paths.segments, name);
    const handle = (async () => {
      await mkdir(paths.segments, { recursive: true, mode: 0o700 });
      const fh = await open(file, "a", 0o600);
      await fh.write(`${JSON.stringify({ t: "segment", pid: process.pid, startedAt: options.now } satisfies JournalEvent)}\n`);
      await fh.sync();
      return fh;
    })().catch((error: unknown) => {
      options.logger.error(
        `jobs: cannot write the journal at ${file} (${(error as Error).message}); jobs run but will not survive a restart. Check that ${dir} is writable.`,
      );
      return undefined;
    });
    const writer = new JournalWriter(file, handle, options.logger);
    await handle;
    writer.#heartbeat = setInterval(() => void utimes(file, new Date(), new Date()).catch(() => undefined), HEARTBEAT_MS);
    writer.#heartbeat.unref();
    return writer;
  }

  /** Appends one event; with `sync`, resolves once it is on disk. A write failure is logged once and never stops a job. */
  append(event: JournalEvent, options: { sync?: boolean } = {}): Promise<void> {
    const line = `${JSON.stringify(event)}\n`;
    this.#tail = this.#tail.then(async () => {
      const fh = await this.#handle;
      if (!fh) return;
      try {
        await fh.write(line);
        if (options.sync) await fh.datasync();
      } catch (error) {
        if (!this.#failed) this.logger.error(`jobs: journal write failed (${(error as Error).message}); jobs go on, but this one may not survive a restart.`);
        this.#failed = true;
      }
    });
    return this.#tail;
  }

  /** Rewrites this segment without the job events `drop` matches (a principal forgotten); appends made meanwhile follow. */
  rewrite(drop: (event: Exclude<JournalEvent, { t: "segment" }>) => boolean): Promise<void> {
    this.#tail = this.#tail.then(async () => {
      const fh = await this.#handle;
      if (!fh) return;
      try {
        await fh.close();
        const lines = (await readFile(this.file, "utf8")).split("\n").filter((line) => {
          const event = line ? parseLine(line) : undefined;
          return line.length > 0 && !(event && event.t !== "segment" && drop(event));
        });
        const temporary = `${this.file}.rewrite.tmp`;
        await writeFile(temporary, `${lines.join("\n")}\n`, { mode: 0o600, flush: true });
        await rename(temporary, this.file);
      } catch (error) {
        this.logger.error(`jobs: could not rewrite the journal segment ${this.file} (${(error as Error).message}); forgotten jobs may still be in it.`);
      } finally {
        this.#handle = open(this.file, "a", 0o600).catch(() => undefined);
      }
    });
    return this.#tail;
  }

  async close(): Promise<void> {
    clearInterval(this.#heartbeat);
    await this.#tail;
    await (await this.#handle)?.close().catch(() => undefined);
  }
}

/**
 * Rewrites the segments of processes that are gone into one compacted segment holding only
 * jobs not dropped (expired, or of a principal forgotten), then removes them (and the expired jobs' transcripts and result files).
 * One process at a time (an exclusive lock file); a crash midway leaves duplicates, which load folds away.
 */
export async function compactJournal(
  dir: string,
  loaded: LoadedJournal,
  options: { now: number; drop: (job: JobRecord) => boolean; logger: Logger; keep?: string },
): Promise<{ removedSegments: number; expired: number } | undefined> {
  const paths = journalPaths(dir);
  const dead = loaded.segments.filter((s) => s.file !== options.keep && !segmentAlive(s, options.now));
  const expired = [...loaded.jobs.values()].filter(options.drop);
  // One compacted segment and nothing expired: nothing to gain.
  if (dead.length === 0 || (dead.length === 1 && dead[0]?.compacted && expired.length === 0)) return undefined;
  if (!(await takeLock(paths.lock, options.now))) return undefined;
  try {
    const deadFiles = new Set(dead.map((s) => s.file));
    // Jobs that have an event in a dead segment; their folded record (all segments) is what is kept.
    const ids = new Set<string>();
    for (const segment of dead) {
      const text = await readFile(segment.file, "utf8").catch(() => "");
      for (const line of text.split("\n")) {
        const event = line ? parseLine(line) : undefined;
        if (event && event.t !== "segment") ids.add(event.id);
      }
    }
    const lines: string[] = [JSON.stringify({ t: "segment", pid: 0, startedAt: options.now } satisfies JournalEvent)];
    let kept = 0;
    for (const id of ids) {
      const job = loaded.jobs.get(id);
      if (!job || options.drop(job)) continue;
      lines.push(...recordEvents(job).map((e) => JSON.stringify(e)));
      kept++;
    }
    const name = `${String(options.now).padStart(15, "0")}-compact-${randomBytes(3).toString("hex")}.jsonl`;
    const temp = join(paths.segments, `.${name}.tmp`);
    const fh = await open(temp, "w", 0o600);
    try {
      await fh.write(`${lines.join("\n")}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(temp, join(paths.segments, name));
    for (const file of deadFiles) await rm(file, { force: true });
    for (const job of expired) {
      loaded.jobs.delete(job.id);
      await rm(join(paths.transcripts, `${job.id}.jsonl`), { force: true });
      await rm(join(paths.results, `${job.id}.json`), { force: true });
    }
    options.logger.debug(`jobs: compacted ${deadFiles.size} journal segment(s) into ${name}: ${kept} job(s) kept, ${expired.length} expired.`);
    return { removedSegments: deadFiles.size, expired: expired.length };
  } finally {
    await rm(paths.lock, { force: true });
  }
}

/** A job's first journal line; `taken` when it came from the shared queue (restarted before it starts, this instance hands it back). */
export function createdLine(record: JobRecord, options: { taken?: true } = {}): JournalEvent {
  const { id, kind, description, principal, session, request, pid } = record;
  return { t: "created", id, ts: record.createdAt, kind, description, principal, session, request, pid, ...options };
}

export function isExpired(job: JobRecord, now: number, retentionMs: number): boolean {
  return job.endedAt !== undefined && now - job.endedAt > retentionMs;
}

/** A record as the fewest events that fold back into it. */
export function recordEvents(job: JobRecord): JournalEvent[] {
  const events: JournalEvent[] = [
    {
      t: "created",
      id: job.id,
      ts: job.createdAt,
      kind: job.kind,
      description: job.description,
      principal: job.principal,
      session: job.session,
      request: job.request,
      pid: job.pid,
      ...(job.taken ? { taken: true as const } : {}),
    },
  ];
  if (job.inSharedQueue && !TERMINAL.has(job.status)) events.push({ t: "handed", id: job.id, ts: job.createdAt });
  if (job.startedAt !== undefined) events.push({ t: "started", id: job.id, ts: job.startedAt });
  if (job.status === "completed" || job.status === "failed" || job.status === "cancelled" || job.status === "interrupted") {
    events.push({
      t: "end",
      id: job.id,
      ts: job.endedAt ?? job.createdAt,
      status: job.status,
      toolCalls: job.toolCalls,
      inFlight: job.inFlight,
      ...(job.result ? { result: job.result } : {}),
      ...(job.resultRef ? { resultRef: job.resultRef } : {}),
      ...(job.error !== undefined ? { error: job.error } : {}),
      ...(job.by !== undefined ? { by: job.by } : {}),
      ...(job.progress ? { progress: job.progress } : {}),
    });
  } else if (job.progress) events.push({ t: "progress", id: job.id, ts: job.createdAt, progress: job.progress, toolCalls: job.toolCalls });
  return events;
}

async function takeLock(lock: string, now: number): Promise<boolean> {
  try {
    await writeFile(lock, String(process.pid), { flag: "wx", mode: 0o600 });
    return true;
  } catch {
    // A lock left by a crashed compaction is taken over after a minute.
    const age = await stat(lock)
      .then((s) => now - s.mtimeMs)
      .catch(() => 0);
    if (age < LOCK_STALE_MS) return false;
    await rm(lock, { force: true });
    return writeFile(lock, String(process.pid), { flag: "wx", mode: 0o600 }).then(
      () => true,
      () => false,
    );
  }
}
