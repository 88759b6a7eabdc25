import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { connect, jobId, textOf, type Harness } from "./harness";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function structured(result: CallToolResult): Array<Record<string, unknown>> {
  return (result.structuredContent as { jobs: Array<Record<string, unknown>> }).jobs;
}

describe("background jobs over MCP", () => {
  it("a slow call started in the background answers with a job id at once, and jobs output collects it", async () => {
    h = await connect();
    const started = await h.text("call_tool", { name: "bad__slow", args: { ms: 1500, steps: 3 }, background: true });
    expect(started).toMatch(/Started job job_[0-9a-f]{12} in the background/);
    const id = jobId(started);
    // Not blocking: the job is still running when asked at once.
    const peek = await h.call("jobs", { action: "output", ids: [id], block: false });
    expect(structured(peek)[0]?.status).toBe("running");
    const done = await h.call("jobs", { action: "output", ids: [id] });
    expect(structured(done)[0]?.status).toBe("completed");
    expect(textOf(done)).toContain("slept 1500 ms");
  });

  it("wait_up_to bounds a blocking wait: a hanging job is still running when it passes", async () => {
    h = await connect();
    const id = jobId(await h.text("call_tool", { name: "bad__hang", background: true }));
    const result = await h.call("jobs", { action: "output", ids: [id], wait_up_to: 0.5 });
    expect(structured(result)[0]?.status).toBe("running");
    expect(textOf(result)).toMatch(/running for/);
  });

  it("a snippet in the background returns what the foreground run would, and its inner calls are in the transcript", async () => {
    h = await connect();
    const code =
      'import { echo } from "mcp/servers/bad/echo";\nconst a = await echo({ text: "one" });\nconst b = await echo({ text: "two" });\nexport default [a, b];';
    const id = jobId(await h.text("execute_code", { code, background: true }));
    const done = await h.call("jobs", { action: "output", ids: [id], transcript: true });
    const text = textOf(done);
    expect(structured(done)[0]?.status).toBe("completed");
    expect(text).toContain('"result":["one","two"]');
    expect(text).toMatch(/#0 bad__echo args:[0-9a-f]{16} \d+ ms ok \d+ B ~\d+ tokens/);
    expect(text).toMatch(/#1 bad__echo/);
    expect(structured(done)[0]?.toolCalls).toBe(2);
    // The result is in structuredContent too, as the foreground call answers it.
    const { content } = structured(done)[0]?.result as { content: Array<{ text: string }> };
    expect(JSON.parse(content[0]!.text).result).toEqual(["one", "two"]);
  });

  it("jobs output gives a job's structured result in structuredContent", async () => {
    h = await connect();
    const id = jobId(await h.text("call_tool", { name: "bad__structured", args: { n: 3 }, background: true }));
    const done = await h.call("jobs", { action: "output", ids: [id] });
    expect(structured(done)[0]).toMatchObject({ status: "completed", result: { structuredContent: { n: 3, doubled: 6 } } });
  });

  it("jobs cancel aborts the run and the cancellation reaches the downstream server", async () => {
    h = await connect();
    const id = jobId(await h.text("call_tool", { name: "bad__slow", args: { ms: 120_000, steps: 1200 }, background: true }));
    // Until the downstream server reports progress: it has the request.
    for (let i = 0; i < 400 && !h.jobs.manager.get(id, "local")?.progress?.updates; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await h.text("jobs", { action: "cancel", ids: [id] })).toMatch(/cancelled/);
    const out = await h.call("jobs", { action: "output", ids: [id] });
    expect(structured(out)[0]?.status).toBe("cancelled");
    let report = { count: 0 };
    for (let i = 0; i < 100 && report.count === 0; i++) {
      report = JSON.parse(await h.text("call_tool", { name: "bad__cancellations" })) as { count: number };
      if (report.count === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(report.count).toBe(1);
    // Terminal states never change: a second cancel leaves it as it was.
    expect(await h.text("jobs", { action: "cancel", ids: [id] })).toMatch(/already ended \(cancelled\)/);
  });

  it("jobs belong to their principal: another principal gets not_found and an empty list", async () => {
    h = await connect();
    const id = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "mine" }, background: true }));
    await h.call("jobs", { action: "output", ids: [id] });
    const other = await h.other("mallory");
    const theirs = (await other.callTool({ name: "jobs", arguments: { action: "output", ids: [id], block: false } })) as CallToolResult;
    expect(structured(theirs)[0]?.status).toBe("not_found");
    expect(textOf((await other.callTool({ name: "jobs", arguments: { action: "list" } })) as CallToolResult)).toMatch(/No jobs yet/);
    expect(textOf((await other.callTool({ name: "jobs", arguments: { action: "cancel", ids: [id] } })) as CallToolResult)).toMatch(/No job/);
    expect(await h.text("jobs", { action: "list" })).toContain(id);
  });

  it("past the concurrency bound jobs queue with their position, and run when a slot frees", async () => {
    h = await connect({ jobs: { maxConcurrent: 1 } });
    const first = jobId(await h.text("call_tool", { name: "bad__hang", background: true }));
    const second = await h.text("call_tool", { name: "bad__echo", args: { text: "queued" }, background: true });
    expect(second).toMatch(/queued at position 1/);
    const peek = await h.call("jobs", { action: "output", ids: [jobId(second)], block: false });
    expect(structured(peek)[0]?.status).toBe("queued");
    await h.call("jobs", { action: "cancel", ids: [first] });
    const done = await h.call("jobs", { action: "output", ids: [jobId(second)] });
    expect(structured(done)[0]?.status).toBe("completed");
    expect(textOf(done)).toContain("queued");
  });

  it("jobs list shows this principal's jobs newest first with status and description", async () => {
    h = await connect();
    const a = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "a" }, background: true }));
    await h.call("jobs", { action: "output", ids: [a] });
    const b = jobId(await h.text("call_tool", { name: "bad__hang", background: true }));
    const list = await h.text("jobs", { action: "list" });
    expect(list.indexOf(b)).toBeLessThan(list.indexOf(a));
    expect(list).toMatch(new RegExp(`${a}\\s+completed.*call_tool: bad__echo`));
    expect(list).toMatch(new RegExp(`${b}\\s+running`));
  });

  it("a running job shows its last progress and how many updates it made", async () => {
    h = await connect();
    const id = jobId(await h.text("call_tool", { name: "bad__slow", args: { ms: 4000, steps: 20 }, background: true }));
    let text = "";
    for (let i = 0; i < 200 && !/\(\d+ updates\)/.test(text); i++) {
      text = textOf(await h.call("jobs", { action: "output", ids: [id], block: false }));
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(text).toMatch(/running for .*; last progress: bad__slow \d+\/20 \(\d+ updates\)/);
    await h.call("jobs", { action: "cancel", ids: [id] });
  });

  it("cancel takes several ids, answering each, and still takes cancel_job's single id", async () => {
    h = await connect();
    const a = jobId(await h.text("call_tool", { name: "bad__hang", background: true }));
    const b = jobId(await h.text("call_tool", { name: "bad__hang", background: true }));
    const both = await h.call("jobs", { action: "cancel", ids: [a, "job_000000000000"] });
    expect(both.isError).toBeFalsy();
    expect(textOf(both)).toMatch(new RegExp(`Job ${a}: cancelled after`));
    expect(textOf(both)).toMatch(/Job job_000000000000: not_found/);
    expect(await h.text("jobs", { action: "cancel", id: b })).toMatch(new RegExp(`Job ${b}: cancelled after`));
    const unknown = await h.call("jobs", { action: "cancel", ids: ["job_000000000000"] });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/No job job_000000000000 for this client/);
  });

  it("list takes a status filter and a limit, and says when it left jobs out", async () => {
    h = await connect();
    const done = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "a" }, background: true }));
    await h.call("jobs", { action: "output", ids: [done] });
    const running = jobId(await h.text("call_tool", { name: "bad__hang", background: true }));
    const completed = await h.text("jobs", { action: "list", status: "completed" });
    expect(completed).toContain(done);
    expect(completed).not.toContain(running);
    expect(await h.text("jobs", { action: "list", limit: 1 })).toMatch(/1 older not shown; raise limit/);
    await h.call("jobs", { action: "cancel", ids: [running] });
  });

  it("output with wait_up_to 0 answers at once, as block: false does", async () => {
    h = await connect();
    const id = jobId(await h.text("call_tool", { name: "bad__hang", background: true }));
    expect(structured(await h.call("jobs", { action: "output", ids: [id], wait_up_to: 0 }))[0]?.status).toBe("running");
    await h.call("jobs", { action: "cancel", ids: [id] });
  });

  it("refuses an unknown action, a missing action or ids, and a field of another action, saying which", async () => {
    h = await connect();
    const refused = async (args: Record<string, unknown>) => {
      const result = await h!.call("jobs", args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      return textOf(result);
    };
    expect(await refused({ action: "wait" })).toMatch(/"action" must be one of "output", "list", "cancel"/);
    expect(await refused({ ids: ["job_000000000000"] })).toMatch(/"action" is required/);
    expect(await refused({ action: "output" })).toMatch(/output needs "ids"/);
    expect(await refused({ action: "output", ids: [] })).toMatch(/output needs "ids"/);
    expect(await refused({ action: "cancel" })).toMatch(/cancel needs "ids"/);
    expect(await refused({ action: "list", ids: ["job_000000000000"] })).toMatch(/"ids" does not belong to action "list"; it takes limit, status/);
    expect(await refused({ action: "cancel", ids: ["job_000000000000"], wait_up_to: 5 })).toMatch(
      /"wait_up_to" does not belong to action "cancel"; it takes ids\./,
    );
    expect(await refused({ action: "list", status: "done" })).toMatch(/"status" must be one of/);
  });

  it("an unknown id is not_found", async () => {
    h = await connect();
    const out = await h.call("jobs", { action: "output", ids: ["job_000000000000"] });
    expect(structured(out)[0]?.status).toBe("not_found");
  });
});
