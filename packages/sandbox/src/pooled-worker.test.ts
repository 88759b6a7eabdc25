import { afterEach, describe, expect, it } from "vitest";
import { PooledWorker, type RunJob, type WorkerReply } from "./pooled-worker.js";

// The built worker: `pnpm build` runs before the tests.
const url = new URL("../dist/worker.js", import.meta.url);
const CHAIN = "let n = 0;\nfor (let i = 0; i < 20; i++) n = (await __host_call('next', n)) as number;\nexport default n;";

const workers: PooledWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.terminate()));
});

function start(options: { spinUs: number; busyRuns?: Int32Array }): PooledWorker {
  const worker = new PooledWorker({
    url,
    runtimeOptions: { memoryLimitBytes: 64 * 1024 * 1024 },
    busyRuns: options.busyRuns ?? new Int32Array(new SharedArrayBuffer(4)),
    spinUs: options.spinUs,
    onDeath: () => undefined,
    onReady: () => undefined,
  });
  workers.push(worker);
  return worker;
}

let runSeq = 0;
function chain(worker: PooledWorker): Promise<WorkerReply> {
  const job: RunJob = {
    type: "run",
    runId: ++runSeq,
    code: CHAIN,
    filename: "snippet.ts",
    deadline: Date.now() + 20_000,
    limits: { memoryLimitBytes: 64 * 1024 * 1024, maxResultBytes: 1024 * 1024 },
    maxOutputBytes: 1024,
    modules: { entry: "snippet.ts", sources: {}, links: {} },
  };
  // Answers at once, so each one is back well inside a wide polling window.
  return worker.run(job, { onCall: async (_name, json) => String(Number(json) + 1), hardDeadline: Date.now() + 30_000 });
}

describe("a worker waiting for its calls' answers (SpinPolicy)", () => {
  it("takes them by polling its port while it has a core to spare", async () => {
    const reply = await chain(start({ spinUs: 50_000 }));
    expect(reply).toMatchObject({ type: "done", outcome: { ok: true, resultJson: "20" } });
    // Every answer but those the policy skipped came in by polling; a worker that only slept would report 0.
    expect(reply.type === "done" && reply.spun).toBeGreaterThanOrEqual(15);
  });

  it("sleeps on its event loop when polling is off or the pool is busy", async () => {
    const off = await chain(start({ spinUs: 0 }));
    expect(off).toMatchObject({ type: "done", outcome: { ok: true, resultJson: "20" }, spun: 0 });
    // Other runs in progress take every core: a poller would take one from them.
    const busyRuns = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(busyRuns, 0, 64);
    const busy = await chain(start({ spinUs: 50_000, busyRuns }));
    expect(busy).toMatchObject({ type: "done", outcome: { ok: true, resultJson: "20" }, spun: 0 });
    // The worker's own run was counted while it ran, and uncounted when it ended.
    expect(Atomics.load(busyRuns, 0)).toBe(64);
  });
});
