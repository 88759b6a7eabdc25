import type { Logger, ToolResult } from "@codemux/core";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { INLINE_RESULT_BYTES, type journalPaths } from "./journal";
import { TERMINAL, type JobRecord } from "./types";

const CANCEL_POLL_MS = 1_000;

/** A job's files beside the journal: its transcript, and its result when too large for a journal line. */
export class JobFiles {
  constructor(readonly paths: ReturnType<typeof journalPaths>) {}

  transcriptFile(id: string): string {
    return join(this.paths.transcripts, `${id}.jsonl`);
  }

  /** Writes a large result to its file; resolves with the name the journal keeps (`resultRef`). */
  async writeResult(id: string, json: string): Promise<string> {
    const ref = `${id}.json`;
    await mkdir(this.paths.results, { recursive: true, mode: 0o700 });
    await writeFile(join(this.paths.results, ref), json, { mode: 0o600 });
    return ref;
  }

  /** What a job's end line keeps of its result: the result, or nothing once it went to its file (`record.resultRef` names it). */
  async keep(record: JobRecord, result: ToolResult, logger: Logger): Promise<ToolResult | undefined> {
    const json = JSON.stringify(result);
    if (json.length <= INLINE_RESULT_BYTES) return result;
    try {
      record.resultRef = await this.writeResult(record.id, json);
      return undefined;
    } catch (error) {
      logger.warn(`jobs: cannot keep the result of ${record.id} in a file (${(error as Error).message}); it is kept in the journal line.`);
      return result;
    }
  }

  /** A result kept in its file; a file that cannot be read says why. */
  async readResult(job: JobRecord & { resultRef: string }): Promise<ToolResult> {
    try {
      return JSON.parse(await readFile(join(this.paths.results, job.resultRef), "utf8")) as ToolResult;
    } catch (error) {
      return { content: [{ type: "text", text: `The result file of ${job.id} cannot be read (${(error as Error).message}).` }], isError: true };
    }
  }

  /** Deletes a job's transcript and result file. */
  async remove(id: string): Promise<void> {
    await rm(this.transcriptFile(id), { force: true });
    await rm(join(this.paths.results, `${id}.json`), { force: true });
  }
}

/** Polls `<dir>/cancel/` (what `codemux jobs cancel` writes) while jobs run here, and cancels those it names. */
export class CancelRequests {
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly paths: ReturnType<typeof journalPaths>,
    readonly jobs: {
      /** Jobs running or waiting in this process. */
      liveCount(): number;
      isLive(id: string): boolean;
      known(id: string): JobRecord | undefined;
      cancel(id: string, by: string): Promise<void>;
      now(): number;
    },
  ) {}

  watch(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.#pickUp(), CANCEL_POLL_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #pickUp(): Promise<void> {
    const { jobs } = this;
    if (jobs.liveCount() === 0) return this.stop();
    const names = await readdir(this.paths.cancel).catch(() => [] as string[]);
    for (const name of names) {
      const file = join(this.paths.cancel, name);
      if (jobs.isLive(name)) {
        const by = await readFile(file, "utf8").then(
          (t) => String((JSON.parse(t) as { by?: unknown }).by ?? "cli"),
          () => "cli",
        );
        await rm(file, { force: true });
        await jobs.cancel(name, by.slice(0, 20));
      } else if (!jobs.known(name) || TERMINAL.has(jobs.known(name)?.status ?? "queued")) {
        // Requests for jobs that ended or never existed here go after a minute (another process may own them).
        const age = await stat(file)
          .then((s) => jobs.now() - s.mtimeMs)
          .catch(() => 0);
        if (age > 60_000 || TERMINAL.has(jobs.known(name)?.status ?? "queued")) await rm(file, { force: true });
      }
    }
  }
}
