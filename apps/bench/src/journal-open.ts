import { JobManager, loadJournal, recordEvents, type JobRecord } from "@codemux/jobs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { round } from "./stats";

type Table = (title: string, rows: Array<[string, string | number, string?]>) => void;

const JOBS = 10_000;

/** A finished job as the journal keeps it: a snippet, its small result, a progress message. */
function job(i: number, now: number): JobRecord {
  return {
    id: `job_${i.toString(16).padStart(12, "0")}`,
    kind: i % 2 ? "execute_code" : "call_tool",
    description: `export default await report(${i})`,
    principal: "local",
    session: "bench",
    request: {
      code: `import { listIssues } from "mcp/servers/github/listIssues";\nexport default (await listIssues({ page: ${i} })).length;`,
      timeoutMs: 30_000,
    },
    pid: 1,
    createdAt: now - 60_000,
    startedAt: now - 59_000,
    endedAt: now - 50_000,
    status: "completed",
    toolCalls: 3,
    inFlight: 0,
    progress: { message: "github__list_issues page=3", updates: 3 },
    result: { content: [{ type: "text", text: `{"result":${i},"durationMs":9000,"toolCalls":3,"estimatedTokens":12}` }] },
  };
}

/** Writes `segments` dead segments holding JOBS jobs between them. */
async function writeJournal(dir: string, segments: number, now: number): Promise<number> {
  await mkdir(join(dir, "segments"), { recursive: true });
  let bytes = 0;
  const per = Math.ceil(JOBS / segments);
  for (let s = 0; s < segments; s++) {
    const lines = [JSON.stringify({ t: "segment", pid: 0, startedAt: now })];
    for (let i = s * per; i < Math.min(JOBS, (s + 1) * per); i++) lines.push(...recordEvents(job(i, now)).map((e) => JSON.stringify(e)));
    const text = `${lines.join("\n")}\n`;
    bytes += text.length;
    await writeFile(join(dir, "segments", `${String(now - segments + s).padStart(15, "0")}-compact-${String(s).padStart(6, "0")}.jsonl`), text);
  }
  return bytes;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Opening the jobs journal with 10,000 finished jobs: reading it alone, and codemux's whole start (recovery and compaction). */
export async function reportJournalOpen(table: Table): Promise<{ jobs: number; bytes: number; loadMs: number; openMs: number; openCompactingMs: number }> {
  const root = await mkdtemp(join(tmpdir(), "codemux-bench-journal-"));
  try {
    const now = Date.now();
    const one = join(root, "one", "jobs");
    const bytes = await writeJournal(one, 1, now);
    const loadMs = await timed(() => loadJournal(one));
    const openMs = await timed(async () => {
      const manager = new JobManager({ dir: one });
      await manager.ready();
      await manager.close();
    });
    const many = join(root, "many", "jobs");
    await writeJournal(many, 100, now);
    const openCompactingMs = await timed(async () => {
      const manager = new JobManager({ dir: many });
      await manager.ready();
      await manager.close();
    });
    table(`Jobs journal with ${JOBS.toLocaleString("en-US")} finished jobs (${round(bytes / 1e6, 1)} MB)`, [
      ["read and fold (loadJournal)", `${round(loadMs, 1)} ms`],
      ["open (JobManager ready)", `${round(openMs, 1)} ms`, "goal: under 1 s"],
      ["open, compacting 100 segments", `${round(openCompactingMs, 1)} ms`],
    ]);
    return { jobs: JOBS, bytes, loadMs, openMs, openCompactingMs };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
