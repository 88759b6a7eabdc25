#!/usr/bin/env node
import { CommanderError } from "commander";
import type { RunContext } from "./context";
import { isUsageFailure } from "./errors";
import { buildProgram } from "./program";
import { startTracing, stopTracing } from "@codemux/runtime";

/** Runs the command line; resolves with the exit code. A failure is one sentence on stderr, never a stack trace. */
async function main(argv: string[]): Promise<number> {
  const dash = argv.indexOf("--");
  const context: RunContext = { inline: dash >= 0 ? argv.slice(dash) : [], stdout: process.stdout, exitCode: 0 };
  // Loads nothing unless the OTEL_* variables ask for traces (the config's `tracing` may still, once it is read).
  await startTracing();
  try {
    await buildProgram(context).parseAsync(dash >= 0 ? argv.slice(0, dash) : argv, { from: "user" });
    return context.exitCode;
  } catch (error) {
    // Commander's usage errors (unknown option or command) exit 1 by default; codemux's README says 2.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`codemux: ${message}\n`);
    if (isUsageFailure(error)) return (error as { exitCode?: number }).exitCode ?? 2;
    if (process.env.CODEMUX_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    return 1;
  } finally {
    // The spans still batched are sent before the process exits, waiting at most a few seconds for the collector.
    await Promise.race([stopTracing().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  }
}

// The one place codemux exits.
process.exit(await main(process.argv.slice(2)));
