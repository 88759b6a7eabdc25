import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { connect, jobId, textOf, type Harness } from "./harness";

// A short foreground limit (the sandbox's cap) keeps these fast: the slow tool waits past it, the loop computes past it.
const FOREGROUND_MS = 400;
const SLOW_MS = 1_500;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function status(result: CallToolResult): unknown {
  return (result.structuredContent as { jobs: Array<{ status: string }> }).jobs[0]?.status;
}

const waitsOnSlowTool = `import { slow } from "mcp/servers/bad/slow";\nconst answer = await slow({ ms: ${SLOW_MS} });\nexport default answer;`;

describe("a background snippet waits on tools past the foreground limit, its own computing still bounded", () => {
  it("the same snippet in the foreground is cut at the limit", async () => {
    h = await connect({ sandbox: { hardTimeoutMs: FOREGROUND_MS } });
    const result = await h.call("execute_code", { code: waitsOnSlowTool });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/deadline/);
  });

  it("in the background it waits for the slow tool and completes", async () => {
    h = await connect({ sandbox: { hardTimeoutMs: FOREGROUND_MS } });
    const id = jobId(await h.text("execute_code", { code: waitsOnSlowTool, background: true }));
    const done = await h.call("jobs", { action: "output", ids: [id], wait_up_to: 60 });
    expect(status(done)).toBe("completed");
    expect(textOf(done)).toContain(`slept ${SLOW_MS} ms`);
  });

  it("the jobs setting bounds the wait: a job allowed less than the tool takes is cut", async () => {
    h = await connect({ sandbox: { hardTimeoutMs: FOREGROUND_MS }, jobs: { maxRunMs: 800 } });
    const id = jobId(await h.text("execute_code", { code: waitsOnSlowTool, background: true }));
    const done = await h.call("jobs", { action: "output", ids: [id], wait_up_to: 60 });
    expect(status(done)).toBe("failed");
    expect(textOf(done)).toMatch(/800 ms deadline/);
  });

  it("a CPU-bound loop in a background snippet is still cut at the foreground limit", async () => {
    h = await connect({ sandbox: { hardTimeoutMs: FOREGROUND_MS } });
    // It waits on the slow tool first (not counted), then computes forever.
    const code = `import { slow } from "mcp/servers/bad/slow";\nawait slow({ ms: ${SLOW_MS} });\nlet n = 0;\nwhile (true) n++;\nexport default n;`;
    const id = jobId(await h.text("execute_code", { code, background: true }));
    const done = await h.call("jobs", { action: "output", ids: [id], wait_up_to: 60 });
    expect(status(done)).toBe("failed");
    expect(textOf(done)).toMatch(new RegExp(`computed for more than its ${FOREGROUND_MS} ms CPU budget`));
  });
});
