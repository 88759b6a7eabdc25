import { misbehavingServerPath } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UsageError } from "../src/errors";
import { JIT_BUDGET_DEFAULT, jitBudget } from "../src/jit";
import { runCli } from "./run-cli";
import { serveCli, stopAll } from "./serve-cli";

describe("CODEMUX_JIT_BUDGET", () => {
  it("is 8,000 bytes by default, a whole number of bytes when given, and off leaves V8's own", () => {
    expect(jitBudget({}, [])).toBe(JIT_BUDGET_DEFAULT);
    expect(JIT_BUDGET_DEFAULT).toBe(8000);
    expect(jitBudget({ CODEMUX_JIT_BUDGET: " 20000 " }, [])).toBe(20000);
    for (const off of ["0", "off", "OFF", "false"]) expect(jitBudget({ CODEMUX_JIT_BUDGET: off }, [])).toBeUndefined();
  });

  it("gives way to node's own --interrupt-budget flag", () => {
    expect(jitBudget({}, ["--interrupt-budget=100000"])).toBeUndefined();
    expect(jitBudget({ CODEMUX_JIT_BUDGET: "9000" }, ["--interrupt_budget=100000"])).toBeUndefined();
  });

  it("refuses what is not a whole number of bytes in its bounds, saying what it takes", () => {
    for (const bad of ["banana", "1.5", "10", "5000000", "-8000"]) {
      expect(() => jitBudget({ CODEMUX_JIT_BUDGET: bad }, [])).toThrow(UsageError);
      expect(() => jitBudget({ CODEMUX_JIT_BUDGET: bad }, [])).toThrow(/whole number of bytes from 1000 to 1000000 \(default 8000\), or off/);
    }
  });
});

describe("codemux serve --http and CODEMUX_JIT_BUDGET", () => {
  let dir: string;
  let config: string;
  const started: ChildProcess[] = [];
  const env = (extra: NodeJS.ProcessEnv = {}) => ({ PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux"), ...extra });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-jit-"));
    config = join(dir, "codemux.json");
    await writeFile(config, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }));
  });
  afterAll(async () => {
    await stopAll(started, "SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  it("sets V8's interrupt budget once listening, and leaves it with off", async () => {
    const args = ["serve", "--http", "127.0.0.1:0", "--config", config, "--no-watch", "--log-level", "debug"];
    const tuned = await serveCli(args, { cwd: dir, env: env(), started });
    expect(tuned.stderr()).toContain("V8's interrupt budget set to 8000 bytes (CODEMUX_JIT_BUDGET)");
    tuned.child.kill("SIGTERM");
    const left = await serveCli(args, { cwd: dir, env: env({ CODEMUX_JIT_BUDGET: "off" }), started });
    expect(left.stderr()).toContain("V8's interrupt budget left as it is");
    left.child.kill("SIGTERM");
  });

  it("refuses a bad value before anything starts, with exit code 2", async () => {
    const run = await runCli(["serve", "--http", "127.0.0.1:0", "--config", config, "--no-watch"], { cwd: dir, env: env({ CODEMUX_JIT_BUDGET: "banana" }) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('CODEMUX_JIT_BUDGET is "banana"');
    expect(run.stderr).not.toContain("serving http");
  });
});
