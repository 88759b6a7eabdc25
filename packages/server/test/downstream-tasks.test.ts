import { taskServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer } from "../src/index";
import { config, node, textOf } from "./helpers";

let core: Codemux;
const asked: string[] = [];

/** A 2025 client of codemux; `elicitation` accepts every question with ok: true. */
async function caller(elicitation: boolean): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const client = new Client({ name: "caller", version: "1.0.0" }, { capabilities: elicitation ? { elicitation: {} } : {} });
  if (elicitation)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(String(request.params.message));
      return { action: "accept", content: { ok: true } };
    });
  await client.connect(clientSide);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name: "call_tool", arguments: { name, args } })) as CallToolResult;

beforeAll(async () => {
  core = new Codemux({ config: config({ t: { ...node(taskServerPath), callTimeoutMs: 2_000 } }) });
  core.start();
  await core.ready(10_000);
});
afterAll(async () => {
  await core.close();
});

describe("a 2026-07-28 server's tasks, followed inside the call", () => {
  it("codemux declares the extension, so the server answers with a task; codemux polls it and answers with its result", async () => {
    const client = await caller(false);
    const result = await call(client, "t__work", { ms: 300, text: "hello" });
    expect(textOf(result)).toBe("done in task: hello");
    await client.close();
  });

  it("a task's status messages reach the caller as progress, with growing values", async () => {
    const client = await caller(false);
    const seen: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool({ name: "call_tool", arguments: { name: "t__work", args: { ms: 900, text: "stepped", steps: 3 } } }, undefined, {
      onprogress: (progress) => seen.push(progress),
    });
    expect(textOf(result as CallToolResult)).toBe("done in task: stepped");
    const messages = seen.map((p) => p.message).filter((m) => m?.startsWith("step"));
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.every((m, i) => i === 0 || m !== messages[i - 1])).toBe(true);
    expect(seen.every((p, i) => i === 0 || p.progress > (seen[i - 1] as { progress: number }).progress)).toBe(true);
    await client.close();
  });

  it("a task's question reaches the calling client, and its answer goes back through tasks/update", async () => {
    const client = await caller(true);
    const result = await call(client, "t__confirm", { message: "Ship it?" });
    expect(asked).toContain("Ship it?");
    expect(textOf(result)).toBe('answered: {"action":"accept","content":{"ok":true}}');
    await client.close();
  });

  it("a person who takes longer than the call timeout to answer a task's question still gets the task's result", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createSessionServer(core.sessions).connect(serverSide);
    const client = new Client({ name: "slow-answerer", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    // 2.5 s to answer, against the server's 2 s call timeout: answering is the task moving, not standing still.
    client.setRequestHandler(ElicitRequestSchema, async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      return { action: "accept", content: { ok: true } };
    });
    await client.connect(clientSide);
    const result = await call(client, "t__confirm", { message: "Take your time?" });
    expect(textOf(result)).toBe('answered: {"action":"accept","content":{"ok":true}}');
    await client.close();
  });

  it("a task that fails answers with its JSON-RPC error's message", async () => {
    const client = await caller(false);
    const result = await call(client, "t__fail", { message: "the build broke" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("the build broke");
    await client.close();
  });

  it("a caller that gives up cancels the task on the server (tasks/cancel)", async () => {
    const client = await caller(false);
    const cancelled = async () => (JSON.parse(textOf(await call(client, "t__cancelled"))) as string[]).length;
    const before = await cancelled();
    const controller = new AbortController();
    // The task's first status message (after ~100 ms) says the server is working on it: the abort must reach a running task.
    let started: () => void = () => undefined;
    const working = new Promise<void>((resolve) => {
      started = resolve;
    });
    const pending = client.callTool({ name: "call_tool", arguments: { name: "t__work", args: { ms: 60_000, text: "long", steps: 600 } } }, undefined, {
      signal: controller.signal,
      onprogress: () => started(),
    });
    await working;
    controller.abort();
    await expect(pending).rejects.toThrow();
    let after = before;
    for (let i = 0; i < 100 && after === before; i++) {
      after = await cancelled();
      if (after === before) await new Promise((r) => setTimeout(r, 50));
    }
    expect(after).toBe(before + 1);
    await client.close();
  });

  it("a task that does not change within the call's timeout is cancelled, and the call times out", async () => {
    const client = await caller(false);
    const before = JSON.parse(textOf(await call(client, "t__cancelled"))).length as number;
    const result = await call(client, "t__work", { ms: 60_000, text: "stalled" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/timed out|did not answer|2000 ?ms|2 ?s/i);
    expect(JSON.parse(textOf(await call(client, "t__cancelled"))).length).toBe(before + 1);
    await client.close();
  });
});
