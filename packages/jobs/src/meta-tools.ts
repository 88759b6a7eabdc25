import { defineMetaTool, textResult, type MetaTool } from "@codemux/server";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { JobsError } from "./errors";
import { age, duration, estimate, seconds, statusLine, summary, transcriptLines, type JobSummary } from "./format";
import type { JobManager } from "./job-manager";
import { readTranscript } from "./transcript";
import { TERMINAL } from "./types";

/** Default wait of a blocking job_output, in seconds: under the 60 s request timeout of the TS SDK and most clients. */
export const DEFAULT_WAIT_SECONDS = 30;
export const MAX_WAIT_SECONDS = 300;
/** While waiting, a progress notification this often keeps clients that reset their timeout on progress alive. */
const WAIT_PROGRESS_MS = 5_000;

type Content = CallToolResult["content"][number];

/** `job_output`, `list_jobs` and `cancel_job` over one job manager. */
export function jobMetaTools(manager: JobManager): MetaTool<never>[] {
  const jobOutput = defineMetaTool<{ ids: string[]; block: boolean; wait_up_to: number; transcript: boolean }>({
    name: "job_output",
    description: `Status and results of background jobs (started with background: true, or agent). Blocks until all are done or wait_up_to seconds pass (default ${DEFAULT_WAIT_SECONDS}), then answers each: running (with progress), queued, completed or failed (with the result), cancelled, interrupted (codemux restarted), not_found.`,
    inputSchema: {
      type: "object",
      properties: {
        ids: { type: "array", items: { type: "string", maxLength: 40 }, maxItems: 20, description: "Job ids (job_...)." },
        block: { type: "boolean", default: true, description: "Wait for the jobs to finish (up to wait_up_to)." },
        wait_up_to: { type: "number", minimum: 0, maximum: MAX_WAIT_SECONDS, default: DEFAULT_WAIT_SECONDS, description: "Seconds to wait at most; above ~55 your client may time out first." },
        transcript: { type: "boolean", default: false, description: "Add each job's tool-call transcript (time, tool, argument digest, duration, outcome, size)." },
      },
      required: ["ids"],
    },
    annotations: { readOnlyHint: true },
    run: async ({ ids, block, wait_up_to, transcript }, ctx) => {
      await manager.ready();
      if (ids.length === 0) throw new JobsError("BAD_REQUEST", '"ids" is empty; pass the job ids to look at (list_jobs shows yours).');
      const principal = ctx.session.principal;
      if (block) {
        const mine = ids.filter((id) => manager.get(id, principal));
        const waiting = manager.wait(mine, { timeoutMs: wait_up_to * 1000, ...(ctx.signal ? { signal: ctx.signal } : {}) });
        let ticks = 0;
        const timer = ctx.progress
          ? setInterval(() => {
              const running = mine.filter((id) => !TERMINAL.has(manager.get(id, principal)?.status ?? "completed"));
              ctx.progress?.({ progress: ++ticks, message: `waiting for ${running.join(", ")}` });
            }, WAIT_PROGRESS_MS)
          : undefined;
        try {
          await waiting;
        } finally {
          clearInterval(timer);
        }
      }
      await manager.refreshForeign();
      const now = manager.now();
      const content: Content[] = [];
      const jobs: JobSummary[] = [];
      for (const id of ids) {
        const job = manager.get(id, principal);
        if (!job) {
          content.push({ type: "text", text: `Job ${id}: not_found\nNo job with this id for this client (list_jobs shows yours; finished jobs are kept ${seconds(manager.retentionMs)}).` });
          jobs.push({ id, status: "not_found" });
          continue;
        }
        const position = manager.position(id);
        const item = summary(job, now, position);
        const remote = !TERMINAL.has(job.status) && !manager.isLocal(id);
        const header = statusLine(job, now, { ...(position ? { position } : {}), remote });
        if (job.status === "completed" || job.status === "failed") {
          const result = await manager.result(job);
          const tokens = result ? estimate(result) : 0;
          item.estimatedTokens = tokens;
          content.push({ type: "text", text: `${header}, ~${tokens} tokens` });
          if (result) content.push(...result.content);
          if (job.status === "failed" && job.error && !result) content.push({ type: "text", text: job.error });
        } else content.push({ type: "text", text: header });
        if (transcript) {
          const { entries, skipped } = await readTranscript(manager.transcriptFile(id));
          const lines = transcriptLines(entries);
          content.push({ type: "text", text: `Transcript of ${id} (${lines.length ? `${entries.filter((e) => e.type === "call").length} calls` : "empty"}${skipped ? `, ${skipped} unreadable lines skipped` : ""}):\n${lines.join("\n")}` });
        }
        jobs.push(item);
      }
      const anyFailed = jobs.length === 1 && jobs[0]?.status === "failed";
      return { content, structuredContent: { jobs }, ...(anyFailed ? { isError: true } : {}) };
    },
  });

  const listJobs = defineMetaTool<{ limit: number; status?: string }>({
    name: "list_jobs",
    description: "Your background jobs, newest first: id, status, age, duration, tool calls and a one-line description.",
    inputSchema: {
      type: "object",
      properties: {
        limit: { type: "integer", minimum: 1, maximum: 100, default: 20, description: "How many to show." },
        status: { type: "string", enum: ["queued", "running", "completed", "failed", "cancelled", "interrupted"], description: "Only jobs with this status." },
      },
    },
    annotations: { readOnlyHint: true },
    run: async ({ limit, status }, ctx) => {
      await manager.refreshForeign();
      const now = manager.now();
      const all = manager.list(ctx.session.principal).filter((j) => !status || j.status === status);
      const shown = all.slice(0, limit);
      if (shown.length === 0) return textResult(status ? `No ${status} jobs.` : "No jobs yet. Start one with background: true on execute_code or call_tool.");
      const lines = shown.map((j) => `${j.id}  ${j.status.padEnd(11)} ${age(now - j.createdAt).padStart(8)}  ${seconds(duration(j, now)).padStart(8)}  ${String(j.toolCalls).padStart(3)} calls  ${j.kind}: ${j.description}`);
      if (all.length > shown.length) lines.push(`(${all.length - shown.length} older not shown; raise limit)`);
      return { content: [{ type: "text", text: lines.join("\n") }], structuredContent: { jobs: shown.map((j) => summary(j, now, manager.position(j.id))) } };
    },
  });

  const cancelJob = defineMetaTool<{ id: string }>({
    name: "cancel_job",
    description: "Cancel a queued or running job: its work is aborted and downstream calls in flight are cancelled. A finished job stays as it is.",
    inputSchema: { type: "object", properties: { id: { type: "string", maxLength: 40, description: "The job id (job_...)." } }, required: ["id"] },
    annotations: { destructiveHint: false, idempotentHint: true },
    run: async ({ id }, ctx) => {
      const before = manager.get(id, ctx.session.principal)?.status;
      const job = await manager.cancel(id, ctx.session.principal, "tool");
      if (!job) throw new JobsError("NOT_FOUND", `No job ${id} for this client; list_jobs shows yours.`);
      if (before && TERMINAL.has(before)) return textResult(`Job ${id} had already ended (${before}); nothing to cancel.`);
      return textResult(`Job ${id}: cancelled after ${seconds(duration(job, manager.now()))}, ${job.toolCalls} tool call(s) made.`);
    },
  });

  return [jobOutput, listJobs, cancelJob] as MetaTool<never>[];
}
