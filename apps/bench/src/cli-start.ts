import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliPath } from "./paths";
import { percentile, round } from "./stats";

type Table = (title: string, rows: Array<[string, string | number, string?]>) => void;

const RUNS = 15;
// Loaded before the CLI: at exit, the process's own CPU (user + system) since it started, on stderr.
const PROBE = `data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("\\ncodemux-bench-cpu "+(u.user+u.system)+"\\n")})`;

export interface CliStartReport {
  runs: number;
  /** Median CPU (ms) and wall time (ms) of one start, per command. */
  commands: Array<{ args: string; cpuMs: number; wallMs: number }>;
}

/** One run of the CLI to its end: its own CPU (not its servers') and the wall time from spawn to exit. */
function once(cli: string, args: string[], cwd: string): { cpuMs: number; wallMs: number } {
  const started = performance.now();
  const run = spawnSync(process.execPath, ["--import", PROBE, cli, ...args], { cwd, encoding: "utf8", env: { ...process.env, CODEMUX_HOME: cwd } });
  const wallMs = performance.now() - started;
  const cpu = /codemux-bench-cpu (\d+)/.exec(run.stderr ?? "");
  if (run.status !== 0 || !cpu) throw new Error(`codemux ${args.join(" ")} failed (exit ${run.status}): ${run.stderr}`);
  return { cpuMs: Number(cpu[1]) / 1000, wallMs };
}

/**
 * What one start of the CLI costs (a stdio client starts it at each launch; CI starts it hundreds of times):
 * `--version` (loading and evaluating the bundle, nothing else) and `list` (the default servers started,
 * listed, stopped). RUNS runs each, interleaved, medians.
 */
export async function reportCliStart(table: Table): Promise<CliStartReport> {
  const cli = cliPath();
  const dir = await mkdtemp(join(tmpdir(), "codemux-bench-start-"));
  const commands = [["--version"], ["list", "--root", dir, "--no-cache"]];
  const samples = commands.map((args) => ({ args, cpu: [] as number[], wall: [] as number[] }));
  try {
    for (let i = 0; i < RUNS; i++) {
      for (const sample of samples) {
        const { cpuMs, wallMs } = once(cli, sample.args, dir);
        sample.cpu.push(cpuMs);
        sample.wall.push(wallMs);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const report: CliStartReport = {
    runs: RUNS,
    commands: samples.map(({ args, cpu, wall }) => ({
      args: args[0] === "list" ? "list --root DIR --no-cache" : args.join(" "),
      cpuMs: round(percentile(cpu, 50), 0),
      wallMs: round(percentile(wall, 50), 0),
    })),
  };
  table(
    `CLI start (${cli}; ${RUNS} runs each, interleaved, medians; CPU is the codemux process's own, not its servers')`,
    report.commands.map((c) => [`codemux ${c.args}`, `${c.cpuMs} ms CPU`, `${c.wallMs} ms wall`]),
  );
  return report;
}
