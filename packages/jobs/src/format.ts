import { estimateTokens, type ToolResult } from "@codemux/core";
import type { TranscriptEntry } from "./transcript";
import type { JobRecord } from "./types";

/** What `jobs` output and list say about one job, for `structuredContent`. */
export interface JobSummary {
  id: string;
  status: JobRecord["status"] | "not_found";
  kind?: string;
  description?: string;
  createdAt?: string;
  durationMs?: number;
  toolCalls?: number;
  inFlight?: number;
  position?: number;
  progress?: JobRecord["progress"];
  error?: string;
  estimatedTokens?: number;
  /** A completed or failed job's result as the foreground call answers it: a client that reads only `structuredContent` gets it too. */
  result?: Pick<ToolResult, "content" | "structuredContent" | "isError">;
}

export function seconds(ms: number): string {
  return ms < 60_000
    ? `${(ms / 1000).toFixed(1)} s`
    : ms < 3_600_000
      ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
      : `${(ms / 3_600_000).toFixed(1)} h`;
}

export function age(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)}s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)}h ago`;
  return `${Math.round(ms / 86_400_000)}d ago`;
}

function calls(n: number): string {
  return `${n} tool call${n === 1 ? "" : "s"}`;
}

/** How long a job ran (or has been running). */
export function duration(job: JobRecord, now: number): number {
  return (job.endedAt ?? now) - (job.startedAt ?? job.createdAt);
}

function progressText(job: JobRecord): string {
  const p = job.progress;
  if (!p) return "";
  const fraction = p.progress !== undefined && p.total ? ` ${p.progress}/${p.total}` : "";
  return p.message || fraction ? `; last progress: ${p.message ?? ""}${fraction}${p.updates ? ` (${p.updates} update${p.updates === 1 ? "" : "s"})` : ""}` : "";
}

/** The header line of one job's block in `jobs` output. */
export function statusLine(job: JobRecord, now: number, extra: { position?: number; remote?: boolean } = {}): string {
  const head = `Job ${job.id}: ${job.status}`;
  switch (job.status) {
    case "queued":
      return `${head}${extra.position ? ` at position ${extra.position}` : ""} (${job.description})`;
    case "running":
      return `${head} for ${seconds(duration(job, now))}, ${calls(job.toolCalls)}${job.inFlight ? ` (${job.inFlight} in flight)` : ""}${progressText(job)}${extra.remote ? ` (in another codemux process, pid ${job.pid})` : ""}`;
    case "completed":
    case "failed":
      return `${head} in ${seconds(duration(job, now))}, ${calls(job.toolCalls)}`;
    case "cancelled":
      return `${head} by ${job.by === "cli" ? "codemux jobs cancel" : job.by === "task" ? "tasks/cancel" : "jobs cancel"} after ${seconds(duration(job, now))}, ${calls(job.toolCalls)}`;
    case "interrupted":
      return `${head}: ${job.error ?? "codemux stopped while this job ran."}${progressText(job)}`;
  }
}

export function summary(job: JobRecord, now: number, position?: number): JobSummary {
  return {
    id: job.id,
    status: job.status,
    kind: job.kind,
    description: job.description,
    createdAt: new Date(job.createdAt).toISOString(),
    durationMs: duration(job, now),
    toolCalls: job.toolCalls,
    inFlight: job.inFlight,
    ...(position ? { position } : {}),
    ...(job.progress ? { progress: job.progress } : {}),
    ...(job.error !== undefined ? { error: job.error } : {}),
  };
}

/** A result's text, for token counts. */
export function resultText(result: ToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** Transcript entries as short lines, newest last; at most `limit` of them. */
export function transcriptLines(entries: TranscriptEntry[], limit = 200): string[] {
  const shown = entries.filter((e) => e.type !== "call_start").slice(-limit);
  const first = entries[0]?.ts ?? 0;
  const lines = shown.map((e) => {
    const at = `+${((e.ts - first) / 1000).toFixed(2)}s`;
    if (e.type === "message") {
      const content = Array.isArray(e.message.content) ? e.message.content : [e.message.content];
      const text = content
        .map((c) => (c.type === "text" ? c.text : c.type === "tool_use" ? `[tool_use ${c.name}]` : c.type === "tool_result" ? "[tool_result]" : `[${c.type}]`))
        .join(" ");
      return `${at} ${e.message.role}: ${text.replace(/\s+/g, " ").slice(0, 200)}`;
    }
    if (e.type === "call") return `${at} #${e.seq} ${e.tool} args:${e.argsSha256} ${e.durationMs} ms ${e.outcome} ${e.bytes} B ~${e.estimatedTokens} tokens`;
    return `${at} ${JSON.stringify(e).slice(0, 200)}`;
  });
  const hidden = entries.filter((e) => e.type !== "call_start").length - shown.length;
  return hidden > 0 ? [`(${hidden} earlier entries not shown)`, ...lines] : lines;
}

export function estimate(result: ToolResult): number {
  return estimateTokens(resultText(result));
}
