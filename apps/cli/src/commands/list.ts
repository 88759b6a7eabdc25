import type { Command } from "commander";
import { withCore, type RunContext } from "../context";
import { SERVER_STATE_LINE } from "../logger";
import { scanLines, serverTable, upfrontTokens } from "../status";

/** `codemux list`: servers, their state and why one is not ready. */
export function registerList(program: Command, context: RunContext): void {
  program
    .command("list")
    .description("list servers, their state and tool counts (exit 1 when one failed or is not ready yet)")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }, command: Command) => {
      // Each failure is told once, in the table (or the JSON), not also as a warning on stderr.
      await withCore(command, context, { omitLog: SERVER_STATE_LINE }, async (core) => {
        if (options.json) {
          // Each server's scan verdict beside its state: the worst finding, and each tool's, with what the model is shown of it.
          const status = core.status().map((s) => {
            const scan = core.scanReport(s.name);
            return scan ? { ...s, scan: { verdict: scan.verdict, instructions: scan.instructions, tools: scan.tools, items: scan.items } } : s;
          });
          context.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
        } else {
          const { upfront, direct } = await upfrontTokens(core);
          context.stdout.write(
            `${serverTable(core)}\nUpfront tool list: ~${upfront.toLocaleString("en-US")} tokens in mode ${core.mode} (~${direct.toLocaleString("en-US")} listing every tool).\n${scanLines(core)}`,
          );
        }
        // A lazy server waiting for its first call (idle), and an entry that is codemux itself (skipped), are as they should be.
        if (core.status().some((s) => !["ready", "idle", "skipped"].includes(s.state))) context.exitCode = 1;
      });
    });
}
