#!/usr/bin/env node
import { CommanderError } from "commander";
import { ConfigError } from "@codemux/pool";
import { UsageError, buildProgram, type RunContext } from "./program";

/** The one place codemux exits: a failure is one sentence on stderr and a non-zero code, never a stack trace. */
async function main(argv: string[]): Promise<number> {
  const dash = argv.indexOf("--");
  const context: RunContext = { inline: dash >= 0 ? argv.slice(dash) : [], stdout: process.stdout, exitCode: 0 };
  try {
    await buildProgram(context).parseAsync(dash >= 0 ? argv.slice(0, dash) : argv, { from: "user" });
    return context.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ConfigError) {
      process.stderr.write(`codemux: ${error.message}\n`);
      return 2;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`codemux: ${error.message}\n`);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`codemux: ${message}\n`);
    if (process.env.CODEMUX_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    return 1;
  }
}

process.exit(await main(process.argv.slice(2)));
