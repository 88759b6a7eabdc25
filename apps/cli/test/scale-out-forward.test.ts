import { askingServerPath, haveProgram, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endParts, taskClient } from "./scale-out-parts";
import { serveCli } from "./serve-cli";

const ALICE = "alice-forward-token-0123456789";
const BOB = "bob-forward-token-0123456789ab";
const STATE_KEY = "a state key every instance shares, 32 bytes or more";

type Asked = { resultType?: string; inputRequests?: Record<string, unknown>; requestState?: string };
type Client2026 = Awaited<ReturnType<typeof taskClient>>;

const ask = (args: { message: string; thenMs?: number }) => ({ name: "call_tool", arguments: { name: "ask__ask", args } });
const textOf = (result: unknown) => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("\n");
const accept = (key: string, answer: string) => ({ [key]: { action: "accept", content: { answer } } });

/** Parks a call of `client` on the asking server's question (`args` of its `ask`): its input_required answer, and the retry that answers it with `answer`. */
async function park(client: Client2026, args: { message: string; thenMs?: number }, answer: string) {
  const asked = (await client.client.callTool(ask(args), { allowInputRequired: true })) as Asked;
  expect(asked.resultType).toBe("input_required");
  const [key] = Object.keys(asked.inputRequests ?? {});
  return { asked, retry: { ...ask(args), inputResponses: accept(key as string, answer), requestState: asked.requestState } };
}

/** Starts a background task of `client` that asks (on `server`, which must have no other question open), and waits (polling through `poll`) until it waits on its question. */
async function askingTask(
  client: Client2026,
  poll: Client2026,
  { message, server = "ask" }: { message: string; server?: string },
): Promise<{ taskId: string; key: string }> {
  await expect(client.client.callTool({ name: "call_tool", arguments: { name: `${server}__ask`, args: { message }, background: true } })).rejects.toThrow(
    /Unsupported result type 'task'/,
  );
  const taskId = client.created.at(-1)?.taskId as string;
  let task: Record<string, unknown> = {};
  await until(async () => (task = await poll.get(taskId)).status !== "working");
  expect(task.status).toBe("input_required");
  const [key] = Object.keys(task.inputRequests as Record<string, unknown>);
  return { taskId, key: key as string };
}

describe.skipIf(!haveProgram("redis-server", "redis-server"))("on Redis, requests for a parked call or a task reach the instance holding it", () => {
  let dir: string;
  let redis: RedisServer;
  const started: ChildProcess[] = [];
  const clients: Array<{ close(): Promise<void> }> = [];
  let a: Awaited<ReturnType<typeof serveCli>>;
  let b: Awaited<ReturnType<typeof serveCli>>;
  const on = async (url: string, token: string) => {
    const client = await taskClient(url, token);
    clients.push(client.client);
    return client;
  };

  async function instance(id: string) {
    const env = { ...process.env, CODEMUX_HOME: await mkdtemp(join(dir, `home-${id}-`)), CODEMUX_STORE: redis.url, CODEMUX_STATE_KEY: STATE_KEY };
    const args = ["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`];
    return serveCli([...args, "--instance-id", id], { cwd: dir, env, started });
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-scale-out-forward-"));
    redis = await startRedisServer();
    await writeFile(
      join(dir, "codemux.json"),
      JSON.stringify({
        mcpServers: { ask: { command: process.execPath, args: [askingServerPath] }, other: { command: process.execPath, args: [askingServerPath] } },
      }),
    );
    [a, b] = [await instance("a"), await instance("b")];
  }, 30_000);

  afterAll(() => endParts({ clients, started, redis, dir }));

  it("a call parked on a, retried through b, gets its result from a", async () => {
    const [onA, onB] = [await on(a.url, ALICE), await on(b.url, ALICE)];
    const { retry } = await park(onA, { message: "Deploy through b?" }, "from b");
    expect(JSON.parse(textOf(await onB.client.callTool(retry)))).toEqual({ action: "accept", content: { answer: "from b" } });
    // Answered once: the park is gone on a, whichever instance the next retry reaches.
    await expect(onB.client.callTool(retry)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("ended or expired") });
  }, 60_000);

  it("a prompt and a resource read parked on a, retried through b, get their answers from a", async () => {
    const [onA, onB] = [await on(a.url, ALICE), await on(b.url, ALICE)];
    const prompt = { name: "ask__ask", arguments: { message: "Prompt through b?" } };
    const asked = (await onA.client.getPrompt(prompt, { allowInputRequired: true })) as Asked;
    expect(asked.resultType).toBe("input_required");
    const promptRetry = { ...prompt, inputResponses: accept(Object.keys(asked.inputRequests ?? {})[0] as string, "from b"), requestState: asked.requestState };
    const answered = await onB.client.getPrompt(promptRetry as never);
    expect(JSON.parse((answered.messages[0]?.content as { text: string }).text)).toEqual({ action: "accept", content: { answer: "from b" } });
    const read = { uri: "asking://ask/Read%20through%20b%3F" };
    const readAsked = (await onA.client.readResource(read, { allowInputRequired: true })) as Asked;
    expect(readAsked.resultType).toBe("input_required");
    const readRetry = {
      ...read,
      inputResponses: accept(Object.keys(readAsked.inputRequests ?? {})[0] as string, "read from b"),
      requestState: readAsked.requestState,
    };
    const contents = (await onB.client.readResource(readRetry as never)).contents as Array<{ text?: string }>;
    expect(JSON.parse(contents[0]?.text ?? "")).toEqual({ action: "accept", content: { answer: "read from b" } });
  }, 60_000);

  it("a retried call that works on after its answer longer than a 2025 request may take to start answering still gets its result", async () => {
    const [onA, onB] = [await on(a.url, ALICE), await on(b.url, ALICE)];
    const { retry } = await park(onA, { message: "Slow after?", thenMs: 11_000 }, "worth the wait");
    expect(JSON.parse(textOf(await onB.client.callTool(retry, { timeout: 30_000 })))).toEqual({ action: "accept", content: { answer: "worth the wait" } });
  }, 60_000);

  it("another principal's retry of alice's parked call, forwarded, gets nothing, and alice's retry still works", async () => {
    const [alice, bob, aliceOnA] = [await on(b.url, ALICE), await on(b.url, BOB), await on(a.url, ALICE)];
    const { retry } = await park(aliceOnA, { message: "Alice's question" }, "alice's answer");
    await expect(bob.client.callTool(retry)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("not issued to this caller") });
    expect(JSON.parse(textOf(await alice.client.callTool(retry)))).toEqual({ action: "accept", content: { answer: "alice's answer" } });
  }, 60_000);

  it("a task started on a shows its question, takes its answer and shows its result through b; bob sees none of it", async () => {
    const [onA, onB, bob] = [await on(a.url, ALICE), await on(b.url, ALICE), await on(b.url, BOB)];
    // Polled through b: its question is held on a, so b shows it only by asking a.
    const { taskId, key } = await askingTask(onA, onB, { message: "Ship it?" });
    const none = `No task "${taskId}" for this client`;
    await expect(bob.get(taskId)).rejects.toThrow(none);
    await expect(bob.update(taskId, accept(key, "bob's"))).rejects.toThrow(none);
    await expect(bob.cancel(taskId)).rejects.toThrow(none);
    await onB.update(taskId, accept(key, "shipped"));
    let task: Record<string, unknown> = {};
    await until(async () => (task = await onB.get(taskId)).status === "completed");
    expect(JSON.stringify(task.result)).toContain("shipped");
    await expect(bob.get(taskId)).rejects.toThrow(none);
  }, 60_000);

  it("a task started on a is cancelled through b", async () => {
    const [onA, onB] = [await on(a.url, ALICE), await on(b.url, ALICE)];
    const { taskId } = await askingTask(onA, onB, { message: "Cancel me?" });
    await onB.cancel(taskId);
    expect((await onA.get(taskId)).status).toBe("cancelled");
  }, 60_000);

  it("once a is killed, a retry of its parked call and an answer to its task through b say they live on a; a task it finished is read on b", async () => {
    const [onA, onB] = [await on(a.url, ALICE), await on(b.url, ALICE)];
    const finished = await askingTask(onA, onA, { message: "Finished before?" });
    await onA.update(finished.taskId, accept(finished.key, "done before"));
    await until(async () => (await onB.get(finished.taskId)).status === "completed");
    const { retry } = await park(onA, { message: "Orphaned?" }, "never");
    // On another server: one server's question at a time can be told apart among one client's requests.
    const { taskId, key } = await askingTask(onA, onA, { message: "Orphaned task?", server: "other" });
    const exited = new Promise((resolve) => a.child.once("exit", resolve));
    a.child.kill("SIGKILL");
    await exited;
    // Finished, it is read from its shared record, with its result, on any instance.
    expect(JSON.stringify((await onB.get(finished.taskId)).result)).toContain("done before");
    await expect(onB.client.callTool(retry)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining(
        "the parked call lives on codemux instance a, not this one: send the retry there, or, if that instance is gone, call the tool again (the call ended with it)",
      ),
    });
    await expect(onB.update(taskId, accept(key, "never"))).rejects.toThrow(
      `Task "${taskId}" runs on codemux instance a, which holds its questions; nothing was answered.`,
    );
  }, 60_000);
  it("while Redis is down, a task running on b is still shown and answered through b", async () => {
    const onB = await on(b.url, ALICE);
    const { taskId, key } = await askingTask(onB, onB, { message: "Without Redis?" });
    await redis.kill();
    expect((await onB.get(taskId)).status).toBe("input_required");
    await onB.update(taskId, accept(key, "no redis needed"));
    let task: Record<string, unknown> = {};
    await until(async () => (task = await onB.get(taskId)).status === "completed");
    expect(JSON.stringify(task.result)).toContain("no redis needed");
  }, 60_000);
});
