import { misbehavingServerPath, recordTasks } from "@codemux/test-servers";
import { Client, fromJsonSchema } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./run-cli";

const TASKS = "io.modelcontextprotocol/tasks";
const AnyObject = fromJsonSchema({ type: "object" });

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-tasks-"));
  config = join(dir, "codemux.json");
  await writeFile(config, JSON.stringify({ mcpServers: { a: { command: process.execPath, args: [misbehavingServerPath, "--name", "a"] } } }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const textOf = (result: unknown) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => (c.type === "text" ? c.text : "")).join("\n");

describe("codemux over stdio, a 2026-07-28 client that declares the Tasks extension", () => {
  it("gets a task for a background call, polls it to completed and reads the call's result; tasks/cancel cancels another", async () => {
    const env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux") };
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, "--config", config], cwd: dir, env, stderr: "pipe" });
    const client = new Client({ name: "tasks", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { extensions: { [TASKS]: {} } } });
    await client.connect(transport);
    const created = recordTasks(transport);
    const get = (taskId: string) => client.request({ method: "tasks/get", params: { taskId } } as never, AnyObject) as Promise<Record<string, unknown>>;
    const background = (name: string, args: Record<string, unknown>) =>
      expect(client.callTool({ name: "call_tool", arguments: { name, args, background: true } })).rejects.toThrow(/Unsupported result type 'task'/);
    try {
      expect(client.getProtocolEra()).toBe("modern");
      await background("a__echo", { text: "from a task" });
      const taskId = created[0]?.taskId as string;
      expect(created[0]).toMatchObject({ resultType: "task", status: "working" });
      let task = await get(taskId);
      for (let i = 0; i < 200 && task.status === "working"; i++) {
        await new Promise((r) => setTimeout(r, 50));
        task = await get(taskId);
      }
      expect(task.status).toBe("completed");
      expect(textOf(task.result)).toBe("from a task");

      await background("a__slow", { ms: 60_000 });
      const slow = created[1]?.taskId as string;
      await client.request({ method: "tasks/cancel", params: { taskId: slow } } as never, AnyObject);
      expect((await get(slow)).status).toBe("cancelled");
    } finally {
      await client.close();
    }
  });
});
