import { isSharedStateDown, textResult, type ToolResult, defineMetaTool, type MetaTool, type MetaToolContext } from "@codemux/core";
import { JobsError } from "./errors";
import { age, duration, estimate, seconds, statusLine, summary, transcriptLines, type JobSummary } from "./format";
import type { JobManager } from "./job-manager";
import { TERMINAL } from "./types";

/** Default wait of a blocking jobs output, in seconds: under the 60 s request timeout of the TS SDK and most clients. */
export const DEFAULT_WAIT_SECONDS = 30;
export const MAX_WAIT_SECONDS = 300;
/** While waiting, a progress notification this often keeps clients that reset their timeout on progress alive. */
const WAIT_PROGRESS_MS = 5_000;

type Content = ToolResult["content"][number];

type Action = "output" | "list" | "cancel";

interface JobsRequest {
  action: Action;
  ids?: string[];
  id?: string;
  block?: boolean;
  wait_up_to?: number;
  transcript?: boolean;
  limit?: number;
  status?: string;
}

/** The fields each action takes; any other is refused by name, so a misplaced one is never silently ignored. */
const ACTION_FIELDS: Record<Action, readonly string[]> = {
  output: ["ids", "block", "wait_up_to", "transcript"],
  list: ["limit", "status"],
  cancel: ["ids", "id"],
};

const STATUSES = ["queued", "running", "completed", "failed", "cancelled", "interrupted"] as const;
const DEFAULT_LIST_LIMIT = 20;

/** What a client sees of the jobs tool: its name, description and input. */
const JOBS_TOOL = {
  name: "jobs",
  description: `Background jobs: output (results of ids, waiting up to wait_up_to s, default ${DEFAULT_WAIT_SECONDS}; transcript adds tool calls), list, cancel ids.`,
  inputSchema: {
    type: "object",
    properties: {
      action: { type: "string", enum: ["output", "list", "cancel"] },
      ids: { type: "array", items: { type: "string", maxLength: 40 }, maxItems: 20 },
      // cancel_job's parameter, still accepted.
      id: { type: "string", maxLength: 40, unlisted: true },
      // block: false is wait_up_to: 0; both are accepted, one is listed.
      block: { type: "boolean", unlisted: true },
      wait_up_to: { type: "number", minimum: 0, maximum: MAX_WAIT_SECONDS },
      transcript: { type: "boolean" },
      // The list says when it left jobs out and to raise limit: no room needed in the listing.
      limit: { type: "integer", minimum: 1, maximum: 100, unlisted: true },
      // A rare filter: accepted, not listed.
      status: { type: "string", enum: STATUSES, unlisted: true },
    },
    required: ["action"],
  },
} satisfies Pick<MetaTool["definition"], "name" | "description" | "inputSchema">;

/**
 * `jobs`: one meta-tool for background jobs, by action (output, list, cancel): one tool costs the
 * upfront list far less than three. Defaults are applied per action, so a field given to the wrong
 * action can be refused.
 */
export function jobsMetaTool(manager: JobManager): MetaTool<never> {
  return defineMetaTool<JobsRequest>({
    ...JOBS_TOOL,
    run: async (request, ctx) => {
      const { action } = request;
      const allowed = ACTION_FIELDS[action];
      const stray = Object.keys(request).filter((field) => field !== "action" && !allowed.includes(field));
      if (stray.length) {
        const listed = allowed.filter((f) => f !== "id");
        throw new JobsError(
          "BAD_REQUEST",
          `${stray.map((f) => `"${f}"`).join(", ")} ${stray.length === 1 ? "does" : "do"} not belong to action "${action}"; it takes ${listed.join(", ")}.`,
        );
      }
      switch (action) {
        case "output":
          return output(manager, request, ctx);
        case "list":
          return list(manager, request, ctx);
        case "cancel":
          return cancel(manager, request, ctx);
      }
    },
  }) as MetaTool<never>;
}

/**
 * The jobs tool of a core that runs no jobs (a one-shot command), listed as `serve` lists it, so the
 * upfront tool list such a core measures is the one a client of `serve` gets.
 */
export function jobsListing(): MetaTool<never> {
  return defineMetaTool<JobsRequest>({
    ...JOBS_TOOL,
    run: async () => {
      throw new JobsError("BAD_REQUEST", "Background jobs run only while codemux serves (codemux serve); this command keeps none.");
    },
  }) as MetaTool<never>;
}

/**
 * Brings the principal's shared job records up to date. While the shared store does not answer, this
 * instance's own jobs still answer: the note returned says only those are shown, and why.
 */
async function refreshShared(manager: JobManager, principal: string, ids: string[] = []): Promise<string | undefined> {
  try {
    await manager.refreshShared(principal, ids);
    return undefined;
  } catch (error) {
    if (!isSharedStateDown(error)) throw error;
    return `Only the jobs this instance runs or ran are shown: ${(error as Error).message}`;
  }
}

/** The job meta-tools over one job manager: `jobs`. */
export function jobMetaTools(manager: JobManager): MetaTool<never>[] {
  return [jobsMetaTool(manager)];
}

async function output(manager: JobManager, request: JobsRequest, ctx: MetaToolContext): Promise<ToolResult> {
  const ids = request.ids ?? [];
  const block = request.block ?? true;
  const waitSeconds = request.wait_up_to ?? DEFAULT_WAIT_SECONDS;
  await manager.ready();
  if (ids.length === 0) throw new JobsError("BAD_REQUEST", 'output needs "ids": the job ids to look at (jobs {action:"list"} shows yours).');
  const principal = ctx.session.principal;
  const note = await refreshShared(manager, principal, ids);
  if (block) {
    const mine = ids.filter((id) => manager.get(id, principal));
    const waiting = manager.wait(mine, { timeoutMs: waitSeconds * 1000, ...(ctx.signal ? { signal: ctx.signal } : {}) });
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
      content.push({
        type: "text",
        text: `Job ${id}: not_found\nNo job with this id for this client (jobs {action:"list"} shows yours; finished jobs are kept ${seconds(manager.retentionMs)}).`,
      });
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
      if (result)
        item.result = {
          content: result.content,
          ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
          ...(result.isError ? { isError: true } : {}),
        };
      content.push({ type: "text", text: `${header}, ~${tokens} tokens` });
      if (result) content.push(...result.content);
      if (job.status === "failed" && job.error && !result) content.push({ type: "text", text: job.error });
    } else content.push({ type: "text", text: header });
    if (request.transcript) {
      const { entries, skipped, error } = await manager.transcript(job);
      const lines = transcriptLines(entries);
      content.push({
        type: "text",
        text:
          error !== undefined
            ? `Transcript of ${id}: ${error}`
            : `Transcript of ${id} (${lines.length ? `${entries.filter((e) => e.type === "call").length} calls` : "empty"}${skipped ? `, ${skipped} unreadable lines skipped` : ""}):\n${lines.join("\n")}`,
      });
    }
    jobs.push(item);
  }
  if (note) content.push({ type: "text", text: note });
  const anyFailed = jobs.length === 1 && jobs[0]?.status === "failed";
  return { content, structuredContent: { jobs }, ...(anyFailed ? { isError: true } : {}) };
}

async function list(manager: JobManager, request: JobsRequest, ctx: MetaToolContext): Promise<ToolResult> {
  const { status } = request;
  const limit = request.limit ?? DEFAULT_LIST_LIMIT;
  const note = await refreshShared(manager, ctx.session.principal);
  await manager.refreshForeign();
  const now = manager.now();
  const all = manager.list(ctx.session.principal).filter((j) => !status || j.status === status);
  const shown = all.slice(0, limit);
  if (shown.length === 0)
    return textResult(
      [status ? `No ${status} jobs.` : "No jobs yet. Start one with background: true on execute_code or call_tool.", ...(note ? [note] : [])].join("\n"),
    );
  const lines = shown.map(
    (j) =>
      `${j.id}  ${j.status.padEnd(11)} ${age(now - j.createdAt).padStart(8)}  ${seconds(duration(j, now)).padStart(8)}  ${String(j.toolCalls).padStart(3)} calls  ${j.kind}: ${j.description}`,
  );
  if (all.length > shown.length) lines.push(`(${all.length - shown.length} older not shown; raise limit)`);
  if (note) lines.push(note);
  return { content: [{ type: "text", text: lines.join("\n") }], structuredContent: { jobs: shown.map((j) => summary(j, now, manager.position(j.id))) } };
}

async function cancel(manager: JobManager, request: JobsRequest, ctx: MetaToolContext): Promise<ToolResult> {
  const ids = [...new Set([...(request.ids ?? []), ...(request.id !== undefined ? [request.id] : [])])];
  if (ids.length === 0) throw new JobsError("BAD_REQUEST", 'cancel needs "ids": the job ids to stop (jobs {action:"list"} shows yours).');
  // This instance's own jobs are still cancelled while the shared store is down; another's answer not_found.
  await refreshShared(manager, ctx.session.principal, ids);
  const lines: string[] = [];
  let missing = 0;
  for (const id of ids) {
    const before = manager.get(id, ctx.session.principal)?.status;
    const job = await manager.cancel(id, ctx.session.principal, "tool");
    if (!job) {
      // One id that is not there is an error, as it always was; in a list it is one line of the answer.
      if (ids.length === 1) throw new JobsError("NOT_FOUND", `No job ${id} for this client; jobs {action:"list"} shows yours.`);
      missing++;
      lines.push(`Job ${id}: not_found; jobs {action:"list"} shows yours.`);
    } else if (before && TERMINAL.has(before)) lines.push(`Job ${id} had already ended (${before}); nothing to cancel.`);
    else lines.push(`Job ${id}: cancelled after ${seconds(duration(job, manager.now()))}, ${job.toolCalls} tool call(s) made.`);
  }
  return { content: [{ type: "text", text: lines.join("\n") }], ...(missing === ids.length ? { isError: true } : {}) };
}
