import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { connect, jobId, textOf, type Harness } from "./harness";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const statusOf = (result: CallToolResult) => (result.structuredContent as { jobs: Array<{ status: string }> }).jobs[0]?.status;

describe("drain", () => {
  it("hands a queued job back as interrupted with a note to resubmit, refuses new jobs, and lets the running one finish", async () => {
    h = await connect({ jobs: { maxConcurrent: 1 } });
    const running = jobId(await h.text("call_tool", { name: "bad__slow", args: { ms: 1500, steps: 3 }, background: true }));
    const queued = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "never" }, background: true }));
    await h.jobs.manager.drain();

    const handedBack = await h.call("jobs", { action: "output", ids: [queued], block: false });
    expect(statusOf(handedBack)).toBe("interrupted");
    expect(textOf(handedBack)).toContain("codemux stopped before this job started; it never ran: submit it again.");
    const refused = await h.call("call_tool", { name: "bad__echo", args: { text: "late" }, background: true });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("This codemux instance is draining before it stops and takes no new jobs");
    const done = await h.call("jobs", { action: "output", ids: [running] });
    expect(statusOf(done)).toBe("completed");
  });
});
