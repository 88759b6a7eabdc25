import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Redactor } from "@codemux/hooks";
import { afterEach, describe, expect, it } from "vitest";
import { connect, jobId, tempDir, textOf, type Harness } from "./harness";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const SECRET = "sk-proj-0123456789abcdefghijklmnop";

function statusOf(result: CallToolResult): unknown {
  return (result.structuredContent as { jobs: Array<{ status: string }> }).jobs[0]?.status;
}

/** Every line the journal holds, as text. */
async function journalText(dataDir: string): Promise<string> {
  const dir = join(dataDir, "jobs", "segments");
  const texts = await Promise.all((await readdir(dir)).map((name) => readFile(join(dir, name), "utf8")));
  return texts.join("\n");
}

describe("no principal fills the job queue", () => {
  it("refuses a principal's job past its share of the queue, naming the limit and its value, while another principal still queues", async () => {
    h = await connect({ jobs: { maxConcurrent: 1, maxQueued: 8, principalLimits: { bob: { jobs: 3 } } } });
    await h.text("call_tool", { name: "bad__hang", background: true });
    expect(await h.text("call_tool", { name: "bad__hang", background: true })).toMatch(/queued at position 1/);
    expect(await h.text("call_tool", { name: "bad__hang", background: true })).toMatch(/queued at position 2/);
    const refused = await h.call("call_tool", { name: "bad__hang", background: true });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(
      'Principal "local" already has 2 jobs waiting, its limit (waiting jobs per principal: 2); wait for some to finish (jobs {action:"list"}), cancel one (jobs {action:"cancel"}), or raise http.limits.perPrincipal.jobs in the config.',
    );

    // bob's own limit (3) overrides the default share, and local's jobs do not count against it.
    const bob = await h.other("bob");
    const start = async () => textOf((await bob.callTool({ name: "call_tool", arguments: { name: "bad__hang", background: true } })) as CallToolResult);
    for (const place of [3, 4, 5]) expect(await start()).toMatch(new RegExp(`queued at position ${place}`));
    expect(await start()).toContain('Principal "bob" already has 3 jobs waiting, its limit (waiting jobs per principal: 3)');
  });

  it("a freed slot goes to a principal running fewer jobs before another principal's older backlog", async () => {
    h = await connect({ jobs: { maxConcurrent: 2 } });
    const running = [
      jobId(await h.text("call_tool", { name: "bad__hang", background: true })),
      jobId(await h.text("call_tool", { name: "bad__hang", background: true })),
    ];
    const backlog = jobId(await h.text("call_tool", { name: "bad__hang", background: true }));
    const bob = await h.other("bob");
    const bobs = jobId(textOf((await bob.callTool({ name: "call_tool", arguments: { name: "bad__hang", background: true } })) as CallToolResult));
    await h.call("jobs", { action: "cancel", ids: [running[0]] });
    const mine = (await bob.callTool({ name: "jobs", arguments: { action: "output", ids: [bobs], block: false } })) as CallToolResult;
    expect(statusOf(mine)).toBe("running");
    expect(statusOf(await h.call("jobs", { action: "output", ids: [backlog], block: false }))).toBe("queued");
  });
});

describe("the journal keeps no arguments in clear", () => {
  // Arguments that the tool never echoes: what is under test is what the journal keeps of the request.
  const args = { ms: 10, query: SECRET, url: `https://example.com/api?apikey=${SECRET}`, password: "hunter2-hunter2" };

  it("without a redactor it keeps only a digest of the request, and masks credentials in descriptions and progress lines", async () => {
    h = await connect();
    const id = jobId(await h.text("call_tool", { name: "bad__slow", args, background: true }));
    await h.call("jobs", { action: "output", ids: [id] });
    const snippet = jobId(await h.text("execute_code", { code: `// key ${SECRET}\nexport default 1;`, background: true }));
    await h.call("jobs", { action: "output", ids: [snippet] });
    const journal = await journalText(h.dataDir);
    expect(journal).toContain(`"id":"${id}"`);
    expect(journal).toContain('"request":{"argsSha256":"');
    expect(journal).toContain("apikey=***");
    expect(journal).not.toContain(SECRET);
    expect(journal).not.toContain("hunter2");
  });

  it("with the audit's redactor it keeps the request with secrets masked by its rule, in the journal and in the job's record", async () => {
    h = await connect({ jobs: { redactor: new Redactor() } });
    const id = jobId(await h.text("call_tool", { name: "bad__slow", args, background: true }));
    await h.call("jobs", { action: "output", ids: [id] });
    const expected = {
      name: "bad__slow",
      args: { ms: 10, query: "[REDACTED:api-key]", url: "https://example.com/api?apikey=[REDACTED:secret-assignment]", password: "[REDACTED]" },
    };
    expect(h.jobs.manager.get(id, "local")?.request).toEqual(expected);
    const journal = await journalText(h.dataDir);
    expect(journal).toContain(`"request":${JSON.stringify(expected)}`);
    expect(journal).not.toContain(SECRET);
    expect(journal).not.toContain("hunter2");
  });
});

describe("an admin's view of the jobs", () => {
  it("lists every principal's jobs, while each principal's own list stays its own", async () => {
    const dataDir = await tempDir();
    h = await connect({ dataDir });
    const bob = await h.other("bob");
    const bobJob = jobId(
      textOf((await bob.callTool({ name: "call_tool", arguments: { name: "bad__echo", args: { text: "b" }, background: true } })) as CallToolResult),
    );
    const localJob = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "l" }, background: true }));
    expect(
      h.jobs.manager
        .all()
        .map((j) => [j.id, j.principal])
        .sort(),
    ).toEqual(
      [
        [bobJob, "bob"],
        [localJob, "local"],
      ].sort(),
    );
    expect(h.jobs.manager.list("bob").map((j) => j.id)).toEqual([bobJob]);
  });
});

describe("forgetting a principal while codemux runs", () => {
  it("cancels its running job and removes its jobs from this process's journal segment, transcripts and results; another's stay", async () => {
    const dataDir = await tempDir();
    h = await connect({ dataDir, jobs: { redactor: new Redactor() } });
    const bob = await h.other("bob");
    const bobText = async (args: Record<string, unknown>) => textOf((await bob.callTool({ name: "call_tool", arguments: args })) as CallToolResult);
    const done = jobId(await bobText({ name: "bad__echo", args: { text: "bob-finished-words" }, background: true }));
    const running = jobId(await bobText({ name: "bad__hang", args: { note: "bob-running-words" }, background: true }));
    const local = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "local-words" }, background: true }));
    await h.call("jobs", { action: "output", ids: [local] });
    await bob.callTool({ name: "jobs", arguments: { action: "output", ids: [done] } });
    expect(await journalText(h.dataDir)).toContain("bob-finished-words");

    expect(await h.jobs.forget("bob")).toBe(2);
    expect(h.jobs.manager.list("bob")).toEqual([]);
    const journal = await journalText(h.dataDir);
    for (const gone of [done, running, "bob-finished-words", "bob-running-words"]) expect(journal).not.toContain(gone);
    expect(journal).toContain("local-words");
    const kept = [
      ...(await readdir(join(h.dataDir, "jobs", "transcripts")).catch(() => [])),
      ...(await readdir(join(h.dataDir, "jobs", "results")).catch(() => [])),
    ];
    expect(kept.filter((name) => name.includes(done) || name.includes(running))).toEqual([]);
    // The segment is still this process's: a job started after the rewrite is journaled, and a restart reads both.
    const later = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "after-words" }, background: true }));
    await h.call("jobs", { action: "output", ids: [later] });
    expect(await journalText(h.dataDir)).toContain("after-words");
    await h.close();
    h = await connect({ dataDir });
    expect(
      h.jobs.manager
        .list("local")
        .map((j) => j.id)
        .sort(),
    ).toEqual([local, later].sort());
    expect(h.jobs.manager.list("bob")).toEqual([]);
  });

  it("keeps a principal's ended jobs for its own retention", async () => {
    let now = Date.now();
    const dataDir = await tempDir();
    h = await connect({ dataDir, jobs: { now: () => now, retentionFor: (principal) => (principal === "bob" ? 1_000 : undefined) } });
    const bob = await h.other("bob");
    const bobs = jobId(
      textOf((await bob.callTool({ name: "call_tool", arguments: { name: "bad__echo", args: { text: "b" }, background: true } })) as CallToolResult),
    );
    const local = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "l" }, background: true }));
    await h.call("jobs", { action: "output", ids: [local] });
    await bob.callTool({ name: "jobs", arguments: { action: "output", ids: [bobs] } });
    now += 5_000;
    await h.close();
    h = await connect({ dataDir, jobs: { now: () => now, retentionFor: (principal) => (principal === "bob" ? 1_000 : undefined) } });
    expect(h.jobs.manager.list("bob")).toEqual([]);
    expect(h.jobs.manager.list("local").map((j) => j.id)).toEqual([local]);
  });
});
