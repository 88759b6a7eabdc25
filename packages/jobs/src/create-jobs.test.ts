import type { CallContext, ToolResult } from "@codemux/core";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJobs, type Jobs } from "./create-jobs";

let jobs: Jobs | undefined;
let dir: string | undefined;
afterEach(async () => {
  await jobs?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  jobs = undefined;
  dir = undefined;
});

describe("the jobs' call middleware", () => {
  it("hands a call made outside any job on as it is: the answer is the rest of the chain's own promise", async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-jobs-mw-"));
    jobs = createJobs({ dataDir: dir, openLater: true });
    const answer = Promise.resolve<ToolResult>({ content: [] });
    const ctx = {
      entry: { qualifiedName: "s__echo" },
      session: { id: "s1", principal: "local" },
      origin: "call_tool",
      arguments: {},
    } as unknown as CallContext;
    expect(jobs.middleware(ctx, () => answer)).toBe(answer);
    await answer;
  });
});
