import { InstanceRegistry, RedisConnection, RedisJobQueue, RedisJobShare, type JobQueueTimes } from "@codemux/redis";
import { haveProgram, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JobsOptions } from "@codemux/jobs";
import { connect, jobId, tempDir, textOf, type Harness } from "./harness";

const haveRedis = haveProgram("redis-server", "redis-server");

type Job = { status: string; error?: string };
const jobOf = (result: CallToolResult) => (result.structuredContent as { jobs: Job[] }).jobs[0] as Job;

/** How many times job `id` was journaled as started in these instances' data folders. */
async function startsOf(instances: Harness[], id: string): Promise<number> {
  let starts = 0;
  for (const { dataDir } of instances) {
    const folder = join(dataDir, "jobs", "segments");
    for (const name of await readdir(folder).catch(() => [] as string[]))
      for (const line of (await readFile(join(folder, name), "utf8")).split("\n"))
        if (line.includes('"t":"started"') && line.includes(`"id":"${id}"`)) starts++;
  }
  return starts;
}

describe.skipIf(!haveRedis)("jobs shared by two instances through a real redis-server", () => {
  let redis: RedisServer;
  let closers: Array<() => Promise<unknown>> = [];
  let test = 0;

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterEach(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    closers = [];
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /**
   * One codemux instance: its own core, journal and Redis connection, sharing jobs (and, unless
   * `queue: false`, the queue) under this test's prefix.
   */
  async function instance(
    id: string,
    options: { jobs?: Partial<JobsOptions>; queue?: boolean; client?: Client; queueTimes?: JobQueueTimes; dataDir?: string } = {},
  ): Promise<Harness> {
    const connection = await RedisConnection.open({ url: redis.url, prefix: `shared-jobs-${test}:` });
    expect(await connection.ready(5000)).toBe(true);
    const registry = new InstanceRegistry(connection, { id });
    registry.start(`http://127.0.0.1:1/${id}`);
    const share = new RedisJobShare(connection, registry);
    const h = await connect({
      jobs: { share, ...options.jobs },
      ...(options.client ? { client: options.client } : {}),
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    });
    closers.push(
      () => connection.close(),
      () => registry.stop(),
      () => share.close(),
    );
    if (options.queue !== false) {
      const queue = await RedisJobQueue.open(connection, options.queueTimes);
      h.jobs.manager.shareQueue(queue, ({ kind, request }, context) => h.core.surface().callTool(kind, request, context));
      closers.push(() => queue.close());
    }
    closers.push(() => h.close());
    return h;
  }
  const next = () => {
    test++;
  };

  /**
   * A job of `h`'s, whose slots are full, waiting in the shared queue. The bound is the shared queue's: a hand-over Redis
   * does not take within the store's 2 s bound (a loaded machine) leaves the job waiting on its instance instead, unbounded,
   * as documented and tested above; such a job is cancelled and sent again.
   */
  async function queuedShared(h: Harness): Promise<string> {
    const inSharedQueue = (id: string) => h.jobs.manager.all().find((job) => job.id === id)?.inSharedQueue === true;
    let waiting = "";
    for (let attempt = 0; attempt < 3; attempt++) {
      waiting = jobId(await h.text("call_tool", { name: "bad__echo", args: { text: "never" }, background: true }));
      if (inSharedQueue(waiting)) break;
      await h.call("jobs", { action: "cancel", ids: [waiting] });
    }
    expect(inSharedQueue(waiting)).toBe(true);
    return waiting;
  }

  /** Instance a, its one slot held by a job that hangs, and a job of its waiting in the shared queue; `ends()` waits for that job to end failed at its 1 s bound. */
  async function oneWaiting() {
    const a = await instance("a", { jobs: { maxConcurrent: 1, maxWaitMs: 1_000 } });
    const holding = jobId(await a.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    const waiting = await queuedShared(a);
    const record = () => a.jobs.manager.all().find((job) => job.id === waiting);
    const ends = async () => {
      await until(() => record()?.status === "failed");
      expect(record()?.error).toBe("No codemux instance had room for this job within 1.0 s; it never ran: submit it again when fewer jobs run.");
      await a.call("jobs", { action: "cancel", ids: [holding] });
    };
    return { waiting, record, ends };
  }

  /**
   * Takes job `id` out of the shared queue behind its instance's back, through a queue of its own on the same Redis, with no
   * instance claiming it: as a removal of the instance's own does when Redis runs it after the instance's 2 s bound gave up.
   */
  async function outOfQueue(id: string): Promise<RedisConnection> {
    const connection = await RedisConnection.open({ url: redis.url, prefix: `shared-jobs-${test}:` });
    closers.push(() => connection.close());
    expect(await connection.ready(5000)).toBe(true);
    const queue = await RedisJobQueue.open(connection);
    closers.push(() => queue.close());
    expect(await queue.remove(id)).toBe(true);
    return connection;
  }

  it("shows a job's transcript and its result over 256 KiB, run on one instance, to its owner through another, and to no one else", async () => {
    next();
    const a = await instance("a");
    const b = await instance("b");
    const code = 'import { echo } from "mcp/servers/bad/echo";\nawait echo({ text: "one" });\nawait echo({ text: "two" });\nexport default 1;';
    const snippet = jobId(await a.text("execute_code", { code, background: true }));
    expect(jobOf(await a.call("jobs", { action: "output", ids: [snippet] })).status).toBe("completed");
    const shown = await b.call("jobs", { action: "output", ids: [snippet], transcript: true });
    expect(textOf(shown)).toMatch(/Transcript of job_[0-9a-f]{12} \(2 calls\):\n.*#0 bad__echo .* ok .*\n.*#1 bad__echo .* ok/);

    const big = jobId(await a.text("call_tool", { name: "bad__huge", args: { bytes: 400_000 }, resultSizeThreshold: 1_000_000, background: true }));
    expect(jobOf(await a.call("jobs", { action: "output", ids: [big] })).status).toBe("completed");
    // The 400 KB result, too large for the shared record, comes whole from its own key.
    const output = await b.call("jobs", { action: "output", ids: [big], wait_up_to: 0 });
    expect(jobOf(output).status).toBe("completed");
    expect(textOf(output)).toContain("x".repeat(400_000));

    const bob = await b.other("token:bob");
    const bobs = (await bob.callTool({
      name: "jobs",
      arguments: { action: "output", ids: [snippet, big], transcript: true, wait_up_to: 0 },
    })) as CallToolResult;
    expect((bobs.structuredContent as { jobs: Job[] }).jobs.map((j) => j.status)).toEqual(["not_found", "not_found"]);
    expect(textOf(bobs)).not.toContain("bad__echo");
  });

  it("runs a job on its own instance when a slot frees, if Redis is down as it would be queued in the shared queue", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1 } });
    const holding = jobId(await a.text("call_tool", { name: "bad__slow", args: { ms: 1500, steps: 3 }, background: true }));
    await redis.kill();
    const started = await a.text("call_tool", { name: "bad__echo", args: { text: "ran here" }, background: true });
    expect(started).toContain("It is queued at position 1.");
    // Neither running nor reading this instance's own jobs needs Redis: the answers say only those are shown, and why.
    const done = await a.call("jobs", { action: "output", ids: [jobId(started), holding], wait_up_to: 30 });
    expect((done.structuredContent as { jobs: Job[] }).jobs.map((j) => j.status)).toEqual(["completed", "completed"]);
    expect(textOf(done)).toContain("ran here");
    const down = /Only the jobs this instance runs or ran are shown: codemux could not list jobs in Redis: Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer/;
    expect(textOf(done)).toMatch(down);
    const listed = await a.call("jobs", { action: "list" });
    expect(listed.isError).toBeFalsy();
    expect(textOf(listed)).toContain(holding);
    expect(textOf(listed)).toMatch(down);
    await redis.restart();
    await until(async () => !textOf(await a.call("jobs", { action: "list" })).includes("Only the jobs"));
  });

  it("ends a job that waits in the shared queue past its bound failed, with a sentence every instance shows", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1, maxWaitMs: 1_000 } });
    // b sees the shared records but takes nothing from the queue.
    const b = await instance("b", { queue: false });
    const holding = jobId(await a.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    const recordOf = (id: string) => a.jobs.manager.all().find((job) => job.id === id);
    const waiting = await queuedShared(a);
    // a's own view is not refreshed from Redis: only its timer ends the job.
    let last: Job | undefined;
    // Seen failing in CI (2026-12-06, 2026-12-07) and never here, from removals Redis answered late or not at all (the next two
    // tests): should it fail again, it says what the job had become.
    await until(async () => (last = jobOf(await a.call("jobs", { action: "output", ids: [waiting], wait_up_to: 0 }))).status === "failed").catch(
      async (error: Error) => {
        const held = jobOf(await a.call("jobs", { action: "output", ids: [holding], wait_up_to: 0 }));
        const here = recordOf(waiting);
        throw new Error(
          `${error.message}; the job was last ${JSON.stringify(last)} (in the shared queue: ${here?.inSharedQueue === true}), the one holding the slot ${JSON.stringify(held)}`,
        );
      },
    );
    // Published as it ends there: b sees it once the write lands.
    await until(async () => jobOf(await b.call("jobs", { action: "output", ids: [waiting], wait_up_to: 0 })).status === "failed");
    const seen = await b.call("jobs", { action: "output", ids: [waiting], wait_up_to: 0 });
    expect(jobOf(seen)).toMatchObject({
      status: "failed",
      error: "No codemux instance had room for this job within 1.0 s; it never ran: submit it again when fewer jobs run.",
    });
    await a.call("jobs", { action: "cancel", ids: [holding] });
  });

  it("ends a job past its bound failed when Redis is too slow to answer its removal, once Redis answers again", async () => {
    next();
    const { record, ends } = await oneWaiting();
    // Up but answering nothing across the bound and past the store's 2 s command bound: the removal goes unanswered.
    redis.pause();
    try {
      await new Promise((resolve) => setTimeout(resolve, 3_200));
      expect(record()?.status).toBe("queued");
    } finally {
      redis.resume();
    }
    await ends();
  });

  it("ends a job that left the shared queue unclaimed (a removal Redis ran after its answer was given up) with the bound's sentence", async () => {
    next();
    const { waiting, ends } = await oneWaiting();
    await outOfQueue(waiting);
    await ends();
  });

  it("ends a job that left the shared queue unclaimed once its shared record can be read again, when it could not be at the bound", async () => {
    next();
    const { waiting, record, ends } = await oneWaiting();
    const connection = await outOfQueue(waiting);
    // Its shared record unreadable across the bound (a format this instance does not know): the removal answers "not there"
    // and the read that would tell why fails.
    const key = `${connection.prefix}job:${waiting}`;
    const kept = await connection.run("read", (client) => client.get(key));
    expect(kept).toEqual(expect.any(String));
    await connection.run("write", (client) => client.set(key, JSON.stringify({ v: 999 }), "KEEPTTL"));
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    expect(record()?.status).toBe("queued");
    await connection.run("write", (client) => client.set(key, kept as string, "KEEPTTL"));
    await ends();
  });

  it("leaves a job another instance took and finished within the bound as it ended there, once the bound is past", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1, maxWaitMs: 3_000 } });
    const holding = jobId(await a.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    const moved = await queuedShared(a);
    const bound = (a.jobs.manager.all().find((job) => job.id === moved)?.createdAt ?? 0) + 3_000;
    // b, with room, takes it from the queue and runs it.
    await instance("b");
    expect(jobOf(await a.call("jobs", { action: "output", ids: [moved], wait_up_to: 20 })).status).toBe("completed");
    // A cancel from a, which queued it, finds it ended.
    expect(textOf(await a.call("jobs", { action: "cancel", ids: [moved] }))).toMatch(/had already ended \(completed\); nothing to cancel/);
    // Its record on a still says it waits in the shared queue: a's timer fires at the bound, and the queue no longer has it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, bound + 500 - Date.now())));
    expect(jobOf(await a.call("jobs", { action: "output", ids: [moved], wait_up_to: 0 }))).toMatchObject({ status: "completed" });
    await a.call("jobs", { action: "cancel", ids: [holding] });
  });

  it("ends a job past its bound when any instance reads it, once the instance that queued it is gone", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1, maxWaitMs: 1_000 } });
    const b = await instance("b", { jobs: { maxConcurrent: 1, maxWaitMs: 1_000 } });
    // b is full too, so the job stays in the queue.
    const bHolding = jobId(await b.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    await a.text("call_tool", { name: "bad__hang", args: {}, background: true });
    const waiting = jobId(await a.text("call_tool", { name: "bad__echo", args: { text: "never" }, background: true }));
    // a stops (its timer with it) while the job waits.
    await a.jobs.close();
    await until(async () => jobOf(await b.call("jobs", { action: "output", ids: [waiting], wait_up_to: 0 })).status === "failed");
    expect(jobOf(await b.call("jobs", { action: "output", ids: [waiting], wait_up_to: 0 })).error).toMatch(/^No codemux instance had room for this job/);
    await b.call("jobs", { action: "cancel", ids: [bHolding] });
  });

  it("ends a job past its bound, unrun, when an instance takes it late from the queue", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1, maxWaitMs: 1_000 } });
    await a.text("call_tool", { name: "bad__hang", args: {}, background: true });
    const waiting = jobId(await a.text("call_tool", { name: "bad__echo", args: { text: "never" }, background: true }));
    await a.jobs.close();
    // b's clock runs 1.2 s ahead: the job is past its bound before any instance with room exists.
    await instance("b", { jobs: { maxWaitMs: 1_000, now: () => Date.now() + 1_200 } });
    // c only reads: it takes nothing from the queue, so the job is ended by the instance that took it.
    const c = await instance("c", { queue: false });
    await until(async () => jobOf(await c.call("jobs", { action: "output", ids: [waiting], wait_up_to: 0 })).status === "failed");
    expect(c.jobs.manager.list("local").find((r) => r.id === waiting)).toMatchObject({ instance: "b", toolCalls: 0 });
  });

  it("counts the jobs an instance put in the shared queue against its principal's waiting share, while they wait", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1, maxQueuedPerPrincipal: 1 } });
    const b = await instance("b", { jobs: { maxConcurrent: 1 } });
    const bHolding = jobId(await b.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    const aHolding = jobId(await a.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    const first = jobId(await a.text("call_tool", { name: "bad__echo", args: { text: "1" }, background: true }));
    const refused = await a.call("call_tool", { name: "bad__echo", args: { text: "2" }, background: true });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('Principal "local" already has 1 jobs waiting, its limit (waiting jobs per principal: 1)');
    // Taken and run by b, it no longer counts.
    await b.call("jobs", { action: "cancel", ids: [bHolding] });
    expect(jobOf(await a.call("jobs", { action: "output", ids: [first], wait_up_to: 20 })).status).toBe("completed");
    expect(await a.text("call_tool", { name: "bad__echo", args: { text: "3" }, background: true })).toMatch(/^Started job/);
    await a.call("jobs", { action: "cancel", ids: [aHolding] });
  });

  it("keeps a job whose 2025 client can answer questions on its own instance, and lets another client's job go to one with room", async () => {
    next();
    const asking = new Client({ name: "asking", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    asking.setRequestHandler((await import("@modelcontextprotocol/sdk/types.js")).ElicitRequestSchema, async () => ({ action: "decline" }));
    const a = await instance("a", { jobs: { maxConcurrent: 1 }, client: asking });
    const b = await instance("b");
    const plain = await a.other("local");
    const holding = jobId(await a.text("call_tool", { name: "bad__slow", args: { ms: 3000, steps: 3 }, background: true }));
    const stays = jobId(await a.text("call_tool", { name: "bad__echo", args: { text: "stayed" }, background: true }));
    const moves = jobId(
      textOf((await plain.callTool({ name: "call_tool", arguments: { name: "bad__echo", args: { text: "moved" }, background: true } })) as CallToolResult),
    );
    const done = await b.call("jobs", { action: "output", ids: [holding, stays, moves], wait_up_to: 30 });
    expect((done.structuredContent as { jobs: Job[] }).jobs.map((j) => j.status)).toEqual(["completed", "completed", "completed"]);
    const records = b.jobs.manager.list("local");
    const instanceOf = (id: string) => records.find((r) => r.id === id)?.instance;
    expect({ stays: instanceOf(stays), moves: instanceOf(moves) }).toEqual({ stays: "a", moves: "b" });
  });

  it("keeps a job whose request is over 256 KiB on its own instance: the queue would carry it whole", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1 } });
    const b = await instance("b");
    const holding = jobId(await a.text("call_tool", { name: "bad__slow", args: { ms: 1500, steps: 3 }, background: true }));
    const big = "x".repeat(300_000);
    const stays = jobId(await a.text("call_tool", { name: "bad__echo", args: { text: big }, background: true }));
    const done = await b.call("jobs", { action: "output", ids: [holding, stays], wait_up_to: 30 });
    expect((done.structuredContent as { jobs: Job[] }).jobs.map((j) => j.status)).toEqual(["completed", "completed"]);
    expect(b.jobs.manager.list("local").find((r) => r.id === stays)?.instance).toBe("a");
  });

  it("hands a queued job back to the shared queue on drain, for another instance to run; a job that must stay ends interrupted", async () => {
    next();
    const asking = new Client({ name: "asking", version: "1.0.0" }, { capabilities: { sampling: {} } });
    const a = await instance("a", { jobs: { maxConcurrent: 1 } });
    const b = await instance("b", { jobs: { maxConcurrent: 1 } });
    const bHolding = jobId(await b.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    const aHolding = jobId(await a.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    // A job in a's own queue that another instance can run: queued while Redis was down.
    await redis.kill();
    const portable = jobId(await a.text("call_tool", { name: "bad__echo", args: { text: "handed back" }, background: true }));
    await redis.restart();
    await until(async () => !textOf(await a.call("jobs", { action: "list" })).includes("Only the jobs"));
    const staying = jobId(
      textOf(
        (await (
          await a.other("local", asking)
        ).callTool({
          name: "call_tool",
          arguments: { name: "bad__echo", args: { text: "asks" }, background: true },
        })) as CallToolResult,
      ),
    );
    await a.jobs.manager.drain();
    // a has room again, but it drains: the handed-back job waits for b.
    await a.call("jobs", { action: "cancel", ids: [aHolding] });
    expect(jobOf(await b.call("jobs", { action: "output", ids: [portable], wait_up_to: 0 })).status).toBe("queued");
    await b.call("jobs", { action: "cancel", ids: [bHolding] });
    const done = await b.call("jobs", { action: "output", ids: [portable, staying], wait_up_to: 20 });
    expect((done.structuredContent as { jobs: Job[] }).jobs.map((j) => j.status)).toEqual(["completed", "interrupted"]);
    expect(textOf(done)).toContain("handed back");
    expect(textOf(done)).toContain("codemux stopped before this job started; it never ran: submit it again.");
    expect(b.jobs.manager.list("local").find((r) => r.id === portable)?.instance).toBe("b");
  });

  it("a drain that starts while Redis is down hands its queued job back once Redis returns, within the drain's bound", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1 } });
    const b = await instance("b", { jobs: { maxConcurrent: 1 } });
    const bHolding = jobId(await b.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    jobId(await a.text("call_tool", { name: "bad__hang", args: {}, background: true }));
    await redis.kill();
    const portable = jobId(await a.text("call_tool", { name: "bad__echo", args: { text: "handed back late" }, background: true }));
    // The first try fails at once (Redis is down); the drain keeps trying until Redis is back.
    const draining = a.jobs.manager.drain();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis.restart();
    await draining;
    await b.call("jobs", { action: "cancel", ids: [bHolding] });
    const done = await b.call("jobs", { action: "output", ids: [portable], wait_up_to: 20 });
    expect(jobOf(done).status).toBe("completed");
    expect(textOf(done)).toContain("handed back late");
  });
  /** The connection, registry and share of an instance that only writes to Redis (a stand-in for what a queuer or another instance left there). */
  async function writer(id: string): Promise<{ share: RedisJobShare; queue: RedisJobQueue; registry: InstanceRegistry }> {
    const connection = await RedisConnection.open({ url: redis.url, prefix: `shared-jobs-${test}:` });
    expect(await connection.ready(5000)).toBe(true);
    const registry = new InstanceRegistry(connection, { id });
    registry.start(`http://127.0.0.1:1/${id}`);
    const share = new RedisJobShare(connection, registry);
    const queue = await RedisJobQueue.open(connection);
    closers.push(
      () => connection.close(),
      () => registry.stop(),
      () => share.close(),
      () => queue.close(),
    );
    return { share, queue, registry };
  }

  const queuedRecord = (id: string, principal: string, createdAt: number) => ({
    id,
    kind: "call_tool",
    description: "bad__echo",
    principal,
    session: "s1",
    request: {},
    pid: 1,
    instance: "q",
    createdAt,
    status: "queued",
    toolCalls: 0,
    inFlight: 0,
    inSharedQueue: true,
  });

  it("ends a job taken from the shared queue whose request fails the taker's check failed, with why, on every instance (never stranded queued)", async () => {
    next();
    const { share, queue } = await writer("q");
    const id = "job_00000000bad1";
    const record = queuedRecord(id, "local", Date.now());
    await share.put({ id, principal: "local", createdAt: record.createdAt, record: JSON.stringify(record), ttlMs: 60_000 });
    // The payload's session names another principal than its record: the taker must not run it.
    await queue.add({
      id,
      payload: JSON.stringify({ record, request: { name: "bad__echo", args: { text: "x" } }, session: { id: "s1", principal: "mallory" } }),
    });
    await instance("a");
    const b = await instance("b", { queue: false });
    await until(async () => jobOf(await b.call("jobs", { action: "output", ids: [id], wait_up_to: 0 })).status === "failed");
    expect(jobOf(await b.call("jobs", { action: "output", ids: [id], wait_up_to: 0 })).error).toMatch(/could not read its request; it never ran/);
  });

  it("finds a job by its id through an instance that never saw it, however many newer jobs its principal has", async () => {
    next();
    const a = await instance("a");
    const old = jobId(await a.text("call_tool", { name: "bad__echo", args: { text: "the oldest" }, background: true }));
    expect(jobOf(await a.call("jobs", { action: "output", ids: [old], wait_up_to: 30 })).status).toBe("completed");
    // 200 newer records of the same principal: a list of the newest no longer reaches the old one.
    const { share } = await writer("w");
    const now = Date.now();
    for (let i = 0; i < 200; i++) {
      const id = `job_${String(i).padStart(12, "0")}`;
      const record = { ...queuedRecord(id, "local", now + 1_000 + i), status: "completed", inSharedQueue: undefined, endedAt: now + 2_000 };
      await share.put({ id, principal: "local", createdAt: record.createdAt, record: JSON.stringify(record), ttlMs: 60_000 });
    }
    const b = await instance("b");
    const seen = await b.call("jobs", { action: "output", ids: [old], wait_up_to: 0 });
    expect(jobOf(seen).status).toBe("completed");
    expect(textOf(seen)).toContain("the oldest");
  });
  it("shows a job that ended while Redis was down as ended on every instance once Redis is back (killed with SIGKILL, restarted)", async () => {
    next();
    const a = await instance("a");
    const b = await instance("b");
    const id = jobId(await a.text("call_tool", { name: "bad__slow", args: { ms: 1500, steps: 3 }, background: true }));
    await until(async () => jobOf(await b.call("jobs", { action: "output", ids: [id], wait_up_to: 0 })).status === "running");
    await redis.kill();
    expect(jobOf(await a.call("jobs", { action: "output", ids: [id], wait_up_to: 30 })).status).toBe("completed");
    await redis.restart();
    await until(async () => jobOf(await b.call("jobs", { action: "output", ids: [id], wait_up_to: 0 })).status === "completed");
  });

  it("runs a job handed out by the queue only when its record says it waits, or that its taker stopped before starting it", async () => {
    next();
    const { share, queue } = await writer("q");
    const now = Date.now();
    const put = async (record: Record<string, unknown>) =>
      share.put({ id: record.id as string, principal: "local", createdAt: now, record: JSON.stringify(record), ttlMs: 60_000 });
    const request = (text: string) => ({ name: "bad__echo", args: { text } });
    // Started by a live instance (q, taken again after its lock lapsed), gone from the records (forgotten), and taken by an instance that is gone.
    const started = { ...queuedRecord("job_0000000000a1", "local", now), status: "running", inSharedQueue: undefined };
    const claimedByGone = { ...queuedRecord("job_0000000000a3", "local", now), instance: "gone", inSharedQueue: undefined };
    await put(started);
    await put(claimedByGone);
    for (const [record, text] of [
      [started, "started elsewhere"],
      [queuedRecord("job_0000000000a2", "local", now), "forgotten"],
      [claimedByGone, "its taker died"],
    ] as const)
      await queue.add({ id: record.id, payload: JSON.stringify({ record, request: request(text), session: { id: "s1", principal: "local" } }) });
    const a = await instance("a");
    await until(async () => jobOf(await a.call("jobs", { action: "output", ids: [claimedByGone.id], wait_up_to: 0 })).status === "completed");
    expect(textOf(await a.call("jobs", { action: "output", ids: [claimedByGone.id], wait_up_to: 0 }))).toContain("its taker died");
    // Handed out in order: the two before it were taken and left alone.
    expect(await startsOf([a], started.id)).toBe(0);
    expect(await startsOf([a], "job_0000000000a2")).toBe(0);
    expect(JSON.parse((await share.get(started.id)) as string)).toMatchObject({ status: "running", instance: "q" });
  });

  it("runs a job once when Redis is away longer than the queue's lock while it runs (the queue hands it out again)", async () => {
    next();
    const times = { lockMs: 1_000, stalledCheckMs: 500 };
    const a = await instance("a", { jobs: { maxConcurrent: 1 }, queueTimes: times });
    const b = await instance("b", { jobs: { maxConcurrent: 1 }, queueTimes: times });
    const holding = jobId(await a.text("call_tool", { name: "bad__slow", args: { ms: 6_000, steps: 6 }, background: true }));
    // a is full: b takes this one from the shared queue.
    const handed = jobId(await a.text("call_tool", { name: "bad__slow", args: { ms: 4_000, steps: 4 }, background: true }));
    await until(async () => jobOf(await b.call("jobs", { action: "output", ids: [handed], wait_up_to: 0 })).status === "running");
    await redis.kill();
    // Away past the lock (a wait that is the fault itself, not a measure).
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await redis.restart();
    const done = await a.call("jobs", { action: "output", ids: [handed, holding], wait_up_to: 30 });
    expect((done.structuredContent as { jobs: Job[] }).jobs.map((j) => j.status)).toEqual(["completed", "completed"]);
    // a had room again while the queue handed the job out again: it read the record and left it to b.
    expect(await startsOf([a, b], handed)).toBe(1);
  });

  it("keeps a jobs output that waits on a job another instance runs waiting through a Redis restart", async () => {
    next();
    const a = await instance("a", { jobs: { maxConcurrent: 1 } });
    const b = await instance("b", { jobs: { maxConcurrent: 1 } });
    jobId(await a.text("call_tool", { name: "bad__slow", args: { ms: 4_000, steps: 4 }, background: true }));
    // a is full: b takes this one from the shared queue, and a waits on it by reading its shared record.
    const handed = jobId(await a.text("call_tool", { name: "bad__slow", args: { ms: 3_000, steps: 3 }, background: true }));
    await until(async () => jobOf(await b.call("jobs", { action: "output", ids: [handed], wait_up_to: 0 })).status === "running");
    const waiting = a.call("jobs", { action: "output", ids: [handed], wait_up_to: 30 });
    await redis.kill();
    // Away for a few of the wait's polls (the fault itself, not a measure).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await redis.restart();
    expect(jobOf(await waiting).status).toBe("completed");
  });

  it("hands a job back when it restarts with the same id after it took the job and stopped before starting it, and then runs it", async () => {
    next();
    const { share, queue } = await writer("q");
    const now = Date.now();
    const id = "job_0000000000b1";
    // What a's previous process left: its journal says it took the job (a process that is gone), its record claims it, unstarted.
    const dataDir = await tempDir();
    await mkdir(join(dataDir, "jobs", "segments"), { recursive: true });
    const created = {
      t: "created",
      id,
      ts: now,
      kind: "call_tool",
      description: "bad__echo",
      principal: "local",
      session: "s1",
      request: {},
      pid: 2 ** 22 + 1,
      taken: true,
    };
    const lines = [{ t: "segment", pid: 2 ** 22 + 1, startedAt: now - 1_000 }, created].map((line) => JSON.stringify(line)).join("\n");
    await writeFile(join(dataDir, "jobs", "segments", `${String(now - 1_000).padStart(15, "0")}-${2 ** 22 + 1}-abcdef.jsonl`), `${lines}\n`);
    const claimed = { ...queuedRecord(id, "local", now), instance: "a", inSharedQueue: undefined };
    await share.put({ id, principal: "local", createdAt: now, record: JSON.stringify(claimed), ttlMs: 60_000 });
    // The queue hands it out again (its lock lapsed).
    const request = { name: "bad__echo", args: { text: "handed back" } };
    await queue.add({ id, payload: JSON.stringify({ record: claimed, request, session: { id: "s1", principal: "local" } }) });
    const a = await instance("a", { dataDir });
    await until(async () => jobOf(await a.call("jobs", { action: "output", ids: [id], wait_up_to: 0 })).status === "completed");
    expect(textOf(await a.call("jobs", { action: "output", ids: [id], wait_up_to: 0 }))).toContain("handed back");
  });
});
