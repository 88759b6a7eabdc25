import { askingServerPath } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endParts, taskClient } from "./scale-out-parts";
import { serveCli } from "./serve-cli";

const ALICE = "alice-tasks-token-0123456789";

/**
 * A task made on `first` that waits on its question: `tasks/update` through `other` (started then) is refused naming
 * `holder`; the answer sent to `first` completes it.
 */
async function answerElsewhere(first: string, other: () => Promise<string>, holder: string): Promise<void> {
  const onFirst = await taskClient(first, ALICE);
  let onOther: Awaited<ReturnType<typeof taskClient>> | undefined;
  try {
    await expect(
      onFirst.client.callTool({ name: "call_tool", arguments: { name: "ask__ask", args: { message: "Deploy?" }, background: true } }),
    ).rejects.toThrow(/Unsupported result type 'task'/);
    const taskId = onFirst.created[0]?.taskId as string;
    let task = await onFirst.get(taskId);
    for (let i = 0; i < 200 && task.status === "working"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      task = await onFirst.get(taskId);
    }
    expect(task.status).toBe("input_required");
    const [key] = Object.keys(task.inputRequests as Record<string, unknown>);
    const answer = { [key as string]: { action: "accept", content: { answer: "yes" } } };
    onOther = await taskClient(await other(), ALICE);
    await expect(onOther.update(taskId, answer)).rejects.toThrow(
      `Task "${taskId}" runs on codemux ${holder}, which holds its questions; nothing was answered. Send tasks/update to that instance`,
    );
    expect((await onFirst.get(taskId)).status).toBe("input_required");
    await onFirst.update(taskId, answer);
    for (let i = 0; i < 200 && task.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      task = await onFirst.get(taskId);
    }
    expect(JSON.stringify(task.result)).toContain("yes");
  } finally {
    await Promise.all([onFirst.client.close(), onOther?.client.close()]);
  }
}

// On Redis the request is forwarded to the instance running the task: scale-out-forward.test.ts.
describe("a task's tasks/update that reaches a process not running the task, on one folder", () => {
  let dir: string;
  const started: ChildProcess[] = [];

  /** `codemux serve --http` for alice over the asking server, with `env` (its home, its store). */
  const serve = async (env: NodeJS.ProcessEnv) =>
    serveCli(["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--token", `alice:${ALICE}`], {
      cwd: dir,
      env: { ...process.env, ...env },
      started,
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-scale-out-tasks-"));
    await writeFile(join(dir, "codemux.json"), JSON.stringify({ mcpServers: { ask: { command: process.execPath, args: [askingServerPath] } } }));
  });

  afterAll(() => endParts({ clients: [], started, dir }));

  it("on one folder: is refused naming the process that runs the task", async () => {
    const home = await mkdtemp(join(dir, "home-shared-"));
    const first = await serve({ CODEMUX_HOME: home, CODEMUX_STORE: "files" });
    // Started once the task waits: it reads the task from the folder's journal, and the process running it is alive.
    const second = async () => (await serve({ CODEMUX_HOME: home, CODEMUX_STORE: "files" })).url;
    await answerElsewhere(first.url, second, `process ${first.child.pid}`);
  }, 60_000);
});
