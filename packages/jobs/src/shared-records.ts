import type { JobShare, Logger, ToolResult } from "@codemux/core";
import type { JobRecord } from "./types";

/** Results up to this size are shared in the job's record; larger ones in a key of their own. */
export const MAX_SHARED_RESULT_BYTES = 256 * 1024;
/** Results larger than this stay in the files of the instance that ran the job (a bound on what one job puts in Redis). */
export const MAX_SHARED_LARGE_RESULT_BYTES = 16 * 1024 * 1024;
/** A shared record outlives the job's retention by this, so it is never gone before the journal forgets it. */
export const SHARE_TTL_SLACK_MS = 60_000;
/** How often records Redis did not take are written again. */
const PUBLISH_RETRY_MS = 1_000;

/**
 * The job records this instance shares with the others (Redis): each state written as it changes,
 * a write Redis did not take written again until it does, and results too large for a record in a
 * key of their own; read back, another instance's large result or transcript.
 */
export class SharedRecords {
  /** Records the share did not take yet, by id (the newest state of each). */
  readonly #unpublished = new Map<string, JobRecord>();
  #publishTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    readonly share: JobShare,
    readonly logger: Logger,
    /** How long a job's shared keys live: its retention and some slack. */
    readonly ttlOf: (record: JobRecord) => number,
  ) {}

  /** Shares a job's record with the other instances; a failure (Redis down) is logged and written again later, or thrown when `strict`. */
  async publish(record: JobRecord, options: { strict?: boolean } = {}): Promise<void> {
    // A result too large to share stays in this instance's files; the others say where it is.
    const { result, taken: _taken, ...rest } = record;
    const json = result ? JSON.stringify(result) : "";
    const shared = json.length > 0 && json.length <= MAX_SHARED_RESULT_BYTES ? { ...rest, result } : rest;
    const ttlMs = this.ttlOf(record);
    await this.share.put({ id: record.id, principal: record.principal, createdAt: record.createdAt, record: JSON.stringify(shared), ttlMs }).then(
      () => this.#unpublished.delete(record.id),
      (error: unknown) => {
        if (options.strict) throw error;
        this.logger.warn(`jobs: cannot share the state of ${record.id}: ${(error as Error).message}; it is written again once Redis answers.`);
        this.#unpublished.set(record.id, record);
        this.#retry();
      },
    );
  }

  /**
   * Records Redis did not take (it was down, or restarted and lost them) are written again until it does: a job that
   * ended meanwhile would otherwise show its last shared state, "running", on every other instance.
   */
  #retry(): void {
    if (this.#publishTimer || this.#closed) return;
    this.#publishTimer = setTimeout(() => {
      this.#publishTimer = undefined;
      const pending = [...this.#unpublished.values()];
      this.#unpublished.clear();
      // Each goes back in the set if it fails again, and rearms the timer.
      for (const record of pending) void this.publish(record);
    }, PUBLISH_RETRY_MS);
    this.#publishTimer.unref();
  }

  /** A result too large for the shared record goes to its own key (up to a bound), for the other instances to read; a failure is logged. */
  async shareLargeResult(record: JobRecord): Promise<void> {
    if (!record.result) return;
    const json = JSON.stringify(record.result);
    if (json.length <= MAX_SHARED_RESULT_BYTES || json.length > MAX_SHARED_LARGE_RESULT_BYTES) return;
    await this.share.putResult({ id: record.id, principal: record.principal, result: json, ttlMs: this.ttlOf(record) }).catch((error: unknown) => {
      this.logger.warn(`jobs: cannot share the result of ${record.id}: ${(error as Error).message}`);
    });
  }

  /** A large result another instance ran to: from Redis, or a sentence saying where it is. */
  async result(job: JobRecord): Promise<ToolResult> {
    let text: string | undefined;
    try {
      text = await this.share.result(job.id, job.principal);
    } catch (error) {
      return { content: [{ type: "text", text: `The result of ${job.id} cannot be read: ${(error as Error).message}` }], isError: true };
    }
    if (text !== undefined) return JSON.parse(text) as ToolResult;
    return {
      content: [
        {
          type: "text",
          text: `The result of ${job.id} is larger than codemux shares between instances (${MAX_SHARED_LARGE_RESULT_BYTES / 1024 / 1024} MiB) and stays with instance ${job.instance ?? "unknown"}; read it through that instance.`,
        },
      ],
      isError: true,
    };
  }

  /** Stops writing again what Redis did not take. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#publishTimer);
  }
}
