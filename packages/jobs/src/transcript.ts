import { type Logger, estimateTokens, type SamplingMessage, type ToolResult } from "@codemux/core";
import { createHash } from "node:crypto";
import { mkdir, open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";

/** A transcript reader reads at most this much of a file, and Redis keeps at most this much (the newest entries matter). */
export const MAX_TRANSCRIPT_BYTES = 16 * 1024 * 1024;

/** A transcript as read: its entries, unreadable lines skipped, whether older lines were left out, and why it could not be read. */
export interface TranscriptRead {
  entries: TranscriptEntry[];
  skipped: number;
  truncated: boolean;
  error?: string;
}

/** One line of a job's transcript. */
export type TranscriptEntry =
  | { ts: number; type: "call_start"; seq: number; tool: string; argsSha256: string }
  | {
      ts: number;
      type: "call";
      seq: number;
      tool: string;
      argsSha256: string;
      durationMs: number;
      outcome: "ok" | "error" | "threw";
      bytes: number;
      estimatedTokens: number;
      /** Where the call came from: a snippet's inner call, call_tool, or the agent's own tool use. */
      origin?: string;
    }
  | { ts: number; type: "message"; message: SamplingMessage };

/** The first 16 hex characters of the arguments' SHA-256: enough to tell calls apart, without keeping the arguments. */
export function argsDigest(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args ?? {}) ?? "";
  } catch {
    text = String(args);
  }
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** A result's size in bytes of JSON and its estimated tokens (the one estimator codemux uses). */
export function resultSize(result: ToolResult): { bytes: number; estimatedTokens: number } {
  const text = result.content.map((c) => (c.type === "text" ? c.text : JSON.stringify(c))).join("\n");
  return { bytes: Buffer.byteLength(text), estimatedTokens: estimateTokens(text) };
}

/**
 * Appends a job's transcript lines in order (not fsynced: a transcript is evidence, the journal is the
 * state), and to `mirror` when given (the shared copy in Redis), in order too.
 */
export class TranscriptWriter {
  #handle: Promise<FileHandle | undefined> | undefined;
  #tail: Promise<void> = Promise.resolve();
  #mirrorTail: Promise<void> = Promise.resolve();
  #failed = false;
  #mirrorFailed = false;

  constructor(
    readonly file: string,
    readonly logger: Logger,
    readonly mirror?: (line: string) => Promise<void>,
  ) {}

  append(entry: TranscriptEntry): Promise<void> {
    const json = JSON.stringify(entry);
    const line = `${json}\n`;
    const { mirror } = this;
    if (mirror)
      this.#mirrorTail = this.#mirrorTail.then(async () => {
        // After one failure the shared copy stops (it would lack lines anyway): a slow Redis never holds the job's end up line by line.
        if (this.#mirrorFailed) return;
        await mirror(json).catch((error: unknown) => {
          this.#mirrorFailed = true;
          this.logger.warn(`jobs: cannot share the transcript ${this.file} (${(error as Error).message}); other instances see it only up to here.`);
        });
      });
    this.#handle ??= (async () => {
      await mkdir(join(this.file, ".."), { recursive: true, mode: 0o700 });
      return open(this.file, "a", 0o600);
    })().catch((error: unknown) => {
      this.logger.warn(`jobs: cannot write transcript ${this.file} (${(error as Error).message}); the job goes on without it.`);
      return undefined;
    });
    const handle = this.#handle;
    this.#tail = this.#tail.then(async () => {
      const fh = await handle;
      if (!fh || this.#failed) return;
      await fh.write(line).catch(() => {
        this.#failed = true;
      });
    });
    return this.#tail;
  }

  async close(): Promise<void> {
    await this.#tail;
    await this.#mirrorTail;
    if (this.#handle) await (await this.#handle)?.close().catch(() => undefined);
  }
}

/** A job's transcript entries (unreadable lines skipped and counted); an absent file is an empty transcript. */
export async function readTranscript(file: string): Promise<TranscriptRead> {
  let text: string;
  let truncated = false;
  try {
    const fh = await open(file, "r");
    try {
      const size = (await fh.stat()).size;
      const start = Math.max(0, size - MAX_TRANSCRIPT_BYTES);
      truncated = start > 0;
      const buffer = Buffer.alloc(size - start);
      await fh.read(buffer, 0, buffer.length, start);
      text = buffer.toString("utf8");
    } finally {
      await fh.close();
    }
  } catch {
    return { entries: [], skipped: 0, truncated: false };
  }
  const lines = text.split("\n");
  // A read that starts mid-file starts mid-line.
  if (truncated) lines.shift();
  return parseTranscript(lines, truncated);
}

/** Transcript lines (JSON, one entry each) as entries; unreadable ones are skipped and counted. */
export function parseTranscript(lines: string[], truncated: boolean): TranscriptRead {
  const entries: TranscriptEntry[] = [];
  let skipped = 0;
  for (const line of lines) {
    if (!line) continue;
    try {
      const value = JSON.parse(line) as TranscriptEntry;
      if (typeof value === "object" && value !== null && typeof value.type === "string") entries.push(value);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { entries, skipped, truncated };
}

/** Completed and in-flight calls of a transcript: what a job had done when codemux stopped. */
export function callCounts(entries: TranscriptEntry[]): { completed: number; inFlight: number } {
  const started = new Set<number>();
  let completed = 0;
  for (const entry of entries) {
    if (entry.type === "call_start") started.add(entry.seq);
    else if (entry.type === "call") {
      started.delete(entry.seq);
      completed++;
    }
  }
  return { completed, inFlight: started.size };
}
