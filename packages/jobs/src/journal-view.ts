import { join } from "node:path";
import { journalPaths, loadJournal, segmentAlive } from "./journal";
import { callCounts, readTranscript } from "./transcript";
import { TERMINAL, type JobRecord } from "./types";

/** A job as the journal shows it from outside a serving process; `live` when the process running it is alive. */
export interface JobView extends JobRecord {
  live: boolean;
}

/**
 * Every job in `<dataDir>/jobs`, newest first, read without writing anything (what `codemux jobs`
 * shows). A job whose process is gone but never ended is shown `interrupted`, as the next codemux
 * to start will journal it.
 */
export async function readJobs(dataDir: string, now = Date.now()): Promise<{ jobs: JobView[]; skippedLines: number; dir: string }> {
  const dir = join(dataDir, "jobs");
  const loaded = await loadJournal(dir);
  const alive = new Set(loaded.segments.filter((s) => segmentAlive(s, now)).map((s) => s.pid));
  const jobs: JobView[] = [];
  for (const job of loaded.jobs.values()) {
    const live = !TERMINAL.has(job.status) && alive.has(job.pid);
    // A job handed to the shared queue is another instance's to run: its shared record tells how it went.
    if (!TERMINAL.has(job.status) && !live && !job.inSharedQueue) {
      const counts = callCounts((await readTranscript(join(journalPaths(dir).transcripts, `${job.id}.jsonl`))).entries);
      job.status = "interrupted";
      job.toolCalls = Math.max(job.toolCalls, counts.completed);
      job.inFlight = counts.inFlight;
      job.error = `codemux stopped while this job ran; ${job.toolCalls} call(s) had completed, ${job.inFlight} were in flight (their outcome is unknown).`;
    }
    jobs.push({ ...job, live });
  }
  jobs.sort((a, b) => b.createdAt - a.createdAt);
  return { jobs, skippedLines: loaded.skipped.reduce((n, s) => n + s.lines, 0), dir };
}
