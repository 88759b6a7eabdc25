import { Sandbox } from "@codemux/sandbox";

export interface SandboxLatency {
  trivialP50Ms: number;
  trivialP99Ms: number;
  sequential100CallsMs: number;
  parallel100CallsMs: number;
}

// Warm means past V8's tiering of the bridge and the bundler: a few hundred runs, not fifty.
const WARMUP_RUNS = 300;
const TRIVIAL_RUNS = 500;
const CALL_RUNS = 30;

const SEQUENTIAL_CALLS = "let sum = 0;\nfor (let i = 0; i < 100; i++) sum += (await __host_call('echo', i)) as number;\nexport default sum;";
const PARALLEL_CALLS = "const all = await Promise.all(Array.from({ length: 100 }, (_, i) => __host_call('echo', i)));\nexport default all.length;";

/** End-to-end latency of `Sandbox.execute` (bundle, worker round trip, fresh QuickJS runtime), warm. */
export async function runSandboxLatency(): Promise<SandboxLatency> {
  const sandbox = new Sandbox();
  const echo = async (_name: string, args: unknown) => args;
  try {
    const timeRun = async (code: string) => {
      const started = performance.now();
      const run = await sandbox.execute({ code, onCall: echo });
      if (!run.ok) throw new Error(`Benchmark snippet failed: ${run.error?.message}`);
      return performance.now() - started;
    };
    for (let i = 0; i < WARMUP_RUNS; i++) {
      await timeRun("export default 1 + 1;");
      if (i % 10 === 0) await timeRun(PARALLEL_CALLS);
    }
    const trivial: number[] = [];
    for (let i = 0; i < TRIVIAL_RUNS; i++) trivial.push(await timeRun("export default 1 + 1;"));
    const sequential: number[] = [];
    const parallel: number[] = [];
    for (let i = 0; i < CALL_RUNS; i++) {
      sequential.push(await timeRun(SEQUENTIAL_CALLS));
      parallel.push(await timeRun(PARALLEL_CALLS));
    }
    return {
      trivialP50Ms: round(percentile(trivial, 0.5)),
      trivialP99Ms: round(percentile(trivial, 0.99)),
      sequential100CallsMs: round(percentile(sequential, 0.5)),
      parallel100CallsMs: round(percentile(parallel, 0.5)),
    };
  } finally {
    await sandbox.close();
  }
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
