import type { SessionInfo } from "@codemux/core";
import { appendFile, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { JobManager } from "./job-manager";
import { loadJournal } from "./journal";

const tempDir = () => mkdtemp(join(tmpdir(), "codemux-jobs-"));

const session: SessionInfo = { id: "s1", principal: "local" };
const DAY = 86_400_000;
let dir = "";
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function finishedJob(manager: JobManager, text: string): Promise<string> {
  const { id } = await manager.start({
    kind: "call_tool",
    description: "echo",
    request: { text },
    session,
    run: async () => ({ content: [{ type: "text", text }] }),
  });
  await manager.wait([id], { timeoutMs: 10_000 });
  return id;
}

describe("the journal", () => {
  it("survives a torn and a corrupt line: they are skipped with a warning and the rest is read", async () => {
    dir = join(await tempDir(), "jobs");
    const first = new JobManager({ dir });
    const id = await finishedJob(first, "kept");
    await first.close();
    const [segment] = await readdir(join(dir, "segments"));
    await appendFile(join(dir, "segments", segment ?? ""), 'garbage that is not json\n{"t":"end","id":');
    const warnings: string[] = [];
    const second = new JobManager({ dir, logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} } });
    const report = await second.ready();
    expect(report.skippedLines).toBe(2);
    expect(warnings.join("\n")).toMatch(/skipped 2 unreadable line/);
    const job = second.get(id, "local");
    expect(job?.status).toBe("completed");
    expect(job?.result?.content[0]).toEqual({ type: "text", text: "kept" });
    await second.close();
  });

  it("compacts the segments of stopped processes into one, and expires jobs past the retention", async () => {
    dir = join(await tempDir(), "jobs");
    let now = Date.now();
    const first = new JobManager({ dir, now: () => now, retentionMs: DAY });
    const old = await finishedJob(first, "old");
    await first.close();
    now += 2 * DAY;
    const second = new JobManager({ dir, now: () => now, retentionMs: DAY });
    const recent = await finishedJob(second, "recent");
    await second.close();
    const third = new JobManager({ dir, now: () => now, retentionMs: DAY });
    const report = await third.ready();
    expect(report.compacted?.removedSegments).toBe(2);
    expect(third.get(old, "local")).toBeUndefined();
    expect(third.get(recent, "local")?.status).toBe("completed");
    await expect(stat(join(dir, "transcripts", `${old}.jsonl`))).rejects.toThrow();
    await third.close();
    // One compacted segment (holding the recent job) and the third process's own.
    const names = (await readdir(join(dir, "segments"))).filter((n) => n.endsWith(".jsonl"));
    expect(names.filter((n) => n.includes("-compact-"))).toHaveLength(1);
    const loaded = await loadJournal(dir);
    expect([...loaded.jobs.keys()]).toEqual([recent]);
  });

  it("a job closed while running is journaled interrupted, and a finished one never changes", async () => {
    dir = join(await tempDir(), "jobs");
    const manager = new JobManager({ dir });
    const { id } = await manager.start({
      kind: "call_tool",
      description: "forever",
      request: {},
      session,
      run: ({ signal }) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
    });
    const done = await finishedJob(manager, "done");
    await manager.close();
    const loaded = await loadJournal(dir);
    expect(loaded.jobs.get(id)?.status).toBe("interrupted");
    expect(loaded.jobs.get(done)?.status).toBe("completed");
  });
});

describe("an unwritable journal folder", () => {
  it("still runs jobs, and says once that they will not survive a restart", async () => {
    dir = await tempDir();
    const file = join(dir, "not-a-folder");
    await appendFile(file, "x");
    const errors: string[] = [];
    const manager = new JobManager({ dir: join(file, "jobs"), logger: { debug() {}, info() {}, warn() {}, error: (m) => errors.push(m) } });
    const id = await finishedJob(manager, "in memory");
    expect(manager.get(id, "local")?.status).toBe("completed");
    expect(errors.join("\n")).toMatch(/will not survive a restart/);
    await manager.close();
  });
});
