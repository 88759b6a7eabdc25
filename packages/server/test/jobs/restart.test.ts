import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { appendFile, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jobId, tempDir, textOf } from "./harness";

const script = join(import.meta.dirname, "fixtures/serve-jobs.mjs");
let dataDir = "";

async function start(): Promise<{
  client: Client;
  transport: StdioClientTransport;
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
}> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [script, dataDir, misbehavingServerPath], stderr: "ignore" });
  const client = new Client({ name: "restart-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    transport,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult,
  };
}

const statusOf = (result: CallToolResult, i = 0) => (result.structuredContent as { jobs: Array<{ status: string }> }).jobs[i]?.status;

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("a codemux killed with SIGKILL mid-job and started again on the same data folder", () => {
  it("reads finished jobs back and marks the running one interrupted with what it had done", async () => {
    dataDir = await tempDir();
    const first = await start();
    const done = jobId(textOf(await first.call("call_tool", { name: "bad__echo", args: { text: "kept across restarts" }, background: true })));
    expect(statusOf(await first.call("jobs", { action: "output", ids: [done] }))).toBe("completed");
    const code =
      'import { echo } from "mcp/servers/bad/echo";\nimport { hang } from "mcp/servers/bad/hang";\nawait echo({ text: "before" });\nawait hang({});\nexport default "never";';
    const running = jobId(textOf(await first.call("execute_code", { code, background: true, timeoutMs: 60_000 })));
    // Until the snippet's second call is in flight.
    for (let i = 0; i < 200; i++) {
      const peek = textOf(await first.call("jobs", { action: "output", ids: [running], block: false }));
      if (peek.includes("1 tool call (1 in flight)")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    process.kill(first.transport.pid ?? 0, "SIGKILL");
    await first.client.close().catch(() => undefined);

    // A torn last line, as a crash mid-write leaves: skipped, not fatal.
    const segments = await readdir(join(dataDir, "jobs/segments"));
    await appendFile(join(dataDir, "jobs/segments", segments[0] ?? "x.jsonl"), '{"t":"end","id":"job_');

    const second = await start();
    try {
      const out = await second.call("jobs", { action: "output", ids: [done, running], block: false });
      expect(statusOf(out, 0)).toBe("completed");
      expect(textOf(out)).toContain("kept across restarts");
      expect(statusOf(out, 1)).toBe("interrupted");
      expect(textOf(out)).toMatch(/1 call\(s\) had completed, 1 were in flight/);
      const withTranscript = textOf(await second.call("jobs", { action: "output", ids: [running], block: false, transcript: true }));
      expect(withTranscript).toMatch(/#0 bad__echo .* ok/);
      expect(await second.call("jobs", { action: "list" }).then(textOf)).toContain(running);
    } finally {
      await second.client.close();
    }
  });
});
