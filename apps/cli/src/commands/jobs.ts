import { age, duration, readJobs, readTranscript, requestCancel, seconds, statusLine, transcriptLines, type JobView } from "@codemux/jobs";
import type { Command } from "commander";
import { join } from "node:path";
import type { RunContext } from "../context";
import { UsageError } from "../errors";
import { codemuxHome } from "@codemux/server";

/** How long `jobs cancel` waits to see the serving codemux end the job (it polls requests each second). */
const CANCEL_WAIT_MS = 5_000;

/** `codemux jobs list | show ID | cancel ID`: background jobs, read from the journal in ~/.codemux/jobs. */
export function registerJobs(program: Command, context: RunContext): void {
  const jobs = program.command("jobs").description("background jobs of codemux on this machine, from its journal (~/.codemux/jobs)");
  jobs
    .command("list")
    .description("jobs, newest first: status, age, duration, tool calls, description")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }) => {
      const now = Date.now();
      const { jobs: all } = await readJobs(codemuxHome(), now);
      if (options.json) {
        context.stdout.write(
          `${JSON.stringify(
            all.map(({ result: _result, ...job }) => job),
            null,
            2,
          )}\n`,
        );
        return;
      }
      if (all.length === 0) {
        context.stdout.write("No jobs. A model starts one with background: true on execute_code or call_tool.\n");
        return;
      }
      for (const job of all) {
        context.stdout.write(
          `${job.id}  ${job.status.padEnd(11)} ${age(now - job.createdAt).padStart(8)}  ${seconds(duration(job, now)).padStart(8)}  ${String(job.toolCalls).padStart(3)} calls  ${job.principal}  ${job.kind}: ${job.description}\n`,
        );
      }
    });
  jobs
    .command("show")
    .description("one job: status, result and the transcript of its tool calls")
    .argument("<id>", "job id (job_...)")
    .option("--json", "machine-readable output (the job and its transcript entries)")
    .action(async (id: string, options: { json?: boolean }) => {
      const { job, dir } = await find(id);
      const { entries } = await readTranscript(join(dir, "transcripts", `${id}.jsonl`));
      if (options.json) {
        context.stdout.write(`${JSON.stringify({ job, transcript: entries }, null, 2)}\n`);
        return;
      }
      const lines = [statusLine(job, Date.now()), `${job.kind}: ${job.description}`, `started by ${job.principal}, ${new Date(job.createdAt).toISOString()}`];
      if (job.result) lines.push("", ...job.result.content.map((c) => (c.type === "text" ? c.text : `[${c.type} content]`)));
      else if (job.resultRef) lines.push("", `(result kept in ${join(dir, "results", job.resultRef)})`);
      else if (job.error) lines.push("", job.error);
      lines.push("", `Transcript (${entries.filter((e) => e.type === "call").length} calls):`, ...transcriptLines(entries, 1_000));
      context.stdout.write(`${lines.join("\n")}\n`);
    });
  jobs
    .command("cancel")
    .description("cancel a running job: the codemux process running it picks the request up within a second")
    .argument("<id>", "job id (job_...)")
    .action(async (id: string) => {
      const { job, dir } = await find(id);
      if (job.status !== "queued" && job.status !== "running") {
        context.stdout.write(`Job ${id} has already ended (${job.status}); nothing to cancel.\n`);
        return;
      }
      if (!job.live) throw new UsageError(`Job ${id} is not running: the codemux process that ran it (pid ${job.pid}) has stopped, so it is interrupted.`, 1);
      await requestCancel(dir, id, "cli");
      for (let waited = 0; waited < CANCEL_WAIT_MS; waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const now = (await readJobs(codemuxHome())).jobs.find((j) => j.id === id);
        if (now && now.status !== "queued" && now.status !== "running") {
          context.stdout.write(`Job ${id}: ${now.status}.\n`);
          return;
        }
      }
      context.stdout.write(`Asked codemux (pid ${job.pid}) to cancel job ${id}; it has not confirmed yet. Check with codemux jobs show ${id}.\n`);
    });
}

async function find(id: string): Promise<{ job: JobView; dir: string }> {
  const { jobs, dir } = await readJobs(codemuxHome());
  const job = jobs.find((j) => j.id === id);
  if (!job) throw new UsageError(`No job ${id.slice(0, 60)} in ${dir}; codemux jobs list shows the jobs kept (7 days after they end).`, 1);
  return { job, dir };
}
