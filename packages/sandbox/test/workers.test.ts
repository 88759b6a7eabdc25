import { Sandbox } from "@codemux/sandbox";
import { describe, expect, it } from "vitest";

const faultyRuntime = new URL("./fixtures/faulty-runtime.mjs", import.meta.url);
const earlyTimerWorker = new URL("./fixtures/early-timer-worker.mjs", import.meta.url);

describe("worker threads", () => {
  it("keeps the main thread and other runs going while a snippet spins", async () => {
    const sandbox = new Sandbox({ workers: 2 });
    try {
      await sandbox.execute({ code: "export default 0;" });
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      // The runaway has seconds of room so that, on a loaded machine too, the other run must finish while it still spins.
      let runawayDone = false;
      const runaway = sandbox.execute({ code: "while (true) {}", timeoutMs: 4_000 }).finally(() => {
        runawayDone = true;
      });
      const other = await sandbox.execute({ code: "export default 'still served';" });
      const spinningWhenOtherFinished = !runawayDone;
      const stopped = await runaway;
      clearInterval(ticker);
      expect(other).toMatchObject({ ok: true, result: "still served" });
      expect(stopped.error).toMatchObject({ kind: "timeout" });
      expect(spinningWhenOtherFinished).toBe(true);
      // The main thread's timer kept firing while the snippet spun (4 s at 10 ms a tick).
      expect(ticks).toBeGreaterThan(50);
    } finally {
      await sandbox.close();
    }
  });

  it("interrupts a spinning snippet when the caller aborts", async () => {
    const sandbox = new Sandbox({ workers: 1 });
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const result = await sandbox.execute({ code: "while (true) {}", timeoutMs: 30_000, signal: controller.signal });
      expect(result.error).toMatchObject({ kind: "aborted" });
      expect(result.durationMs).toBeLessThan(30_000);
      expect(await sandbox.execute({ code: "export default 1;" })).toMatchObject({ ok: true, result: 1 });
    } finally {
      await sandbox.close();
    }
  });

  it("ends a snippet at its deadline in the worker when the worker's timers fire early", async () => {
    const sandbox = new Sandbox({ workers: 1, workerUrl: earlyTimerWorker });
    try {
      // A started worker, and a deadline far enough off that the run waits on its timers (a busy worker may start a run late).
      expect(await sandbox.execute({ code: "export default 1;" })).toMatchObject({ ok: true, result: 1 });
      const late = await sandbox.execute({ code: "await new Promise((r) => setTimeout(r, 60_000));", timeoutMs: 1_000 });
      expect(late).toMatchObject({ ok: false, error: { kind: "timeout" } });
      // The engine ended the run itself: the watchdog did not have to stop the worker.
      expect(late.error?.message).not.toContain("its worker was stopped");
    } finally {
      await sandbox.close();
    }
  });

  it("replaces a worker that dies during a run", async () => {
    const sandbox = new Sandbox({ workers: 1, runtimeModule: faultyRuntime });
    try {
      const crashed = await sandbox.execute({ code: "__crash_worker__;" });
      expect(crashed).toMatchObject({ ok: false, error: { kind: "worker_crashed" } });
      expect(await sandbox.execute({ code: "export default 1;" })).toMatchObject({ ok: true, result: "fine" });
    } finally {
      await sandbox.close();
    }
  });

  it("terminates and replaces a worker that stops answering", async () => {
    const sandbox = new Sandbox({ workers: 1, runtimeModule: faultyRuntime });
    try {
      const hung = await sandbox.execute({ code: "__hang_worker__;", timeoutMs: 200 });
      expect(hung).toMatchObject({ ok: false, error: { kind: "timeout" } });
      expect(hung.error?.message).toContain("its worker was stopped");
      expect(await sandbox.execute({ code: "export default 1;" })).toMatchObject({ ok: true, result: "fine" });
    } finally {
      await sandbox.close();
    }
  });
});
