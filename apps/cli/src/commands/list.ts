import type { Command } from "commander";
import { withCore, type RunContext } from "../context";
import { serverTable, upfrontTokens } from "../status";

/** `codemux list`: servers, their state and why one is not ready. */
export function registerList(program: Command, context: RunContext): void {
  program
    .command("list")
    .description("list servers, their state and tool counts (exit 1 when one is not ready)")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }, command: Command) => {
      await withCore(command, context, async (core) => {
        if (options.json) context.stdout.write(`${JSON.stringify(core.status(), null, 2)}\n`);
        else {
          const { upfront, direct } = await upfrontTokens(core);
          context.stdout.write(
            `${serverTable(core)}\nUpfront tool list: ~${upfront.toLocaleString("en-US")} tokens in mode ${core.mode} (~${direct.toLocaleString("en-US")} listing every tool).\n`,
          );
        }
        // A lazy server waiting for its first call (idle) is as it should be.
        if (core.status().some((s) => s.state !== "ready" && s.state !== "idle")) context.exitCode = 1;
      });
    });
}
