import type { JobShare, Logger, ToolResult } from "@codemux/core";
import type { JobFiles } from "./job-files";
import type { LiveJob } from "./live-job";
import { SHARE_TTL_SLACK_MS } from "./shared-records";
import { argsDigest, MAX_TRANSCRIPT_BYTES, parseTranscript, readTranscript, resultSize, TranscriptWriter, type TranscriptRead } from "./transcript";
import type { JobRecord } from "./types";

export interface JobTranscriptsOptions {
  files: JobFiles;
  logger: Logger;
  share: JobShare | undefined;
  now(): number;
  retentionOf(job: JobRecord): number;
}

/** Each job's transcript of its tool calls: written beside the journal (and to the share, with shared jobs), read from either. */
export class JobTranscripts {
  readonly #options: JobTranscriptsOptions;

  constructor(options: JobTranscriptsOptions) {
    this.#options = options;
  }

  file(id: string): string {
    return this.#options.files.transcriptFile(id);
  }

  /** The writer of a job's transcript. */
  writer(record: JobRecord): TranscriptWriter {
    const { share, logger } = this.#options;
    const { id, principal } = record;
    // With shared jobs every line also goes to Redis, bounded as a file is read, so any instance shows it to its owner.
    const mirror = share
      ? (line: string) =>
          share.appendTranscript({ id, principal, line, maxBytes: MAX_TRANSCRIPT_BYTES, ttlMs: this.#options.retentionOf(record) + SHARE_TTL_SLACK_MS })
      : undefined;
    return new TranscriptWriter(this.file(id), logger, mirror);
  }

  /** A job's transcript: its file, or the shared copy when `elsewhere` (another instance ran it). A transcript that cannot be read says why. */
  async read(job: JobRecord, elsewhere: boolean): Promise<TranscriptRead> {
    const { share } = this.#options;
    if (!share || !elsewhere) return readTranscript(this.file(job.id));
    try {
      return parseTranscript(await share.transcript(job.id, job.principal), false);
    } catch (error) {
      return { entries: [], skipped: 0, truncated: false, error: (error as Error).message };
    }
  }

  /** Runs one tool call of a live job and writes it to the job's transcript, counting it in the job's record. */
  async record<T extends ToolResult>(live: LiveJob, call: { tool: string; args: unknown; origin: string }, run: () => Promise<T>): Promise<T> {
    const { now } = this.#options;
    const seq = live.seq++;
    const digest = argsDigest(call.args);
    const { record } = live;
    // Written before the call goes out: after a crash, a call with no end line is known to have been in flight.
    await live.transcript.append({ ts: now(), type: "call_start", seq, tool: call.tool, argsSha256: digest });
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
        ts: now(),
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
}
