import { parseJsonc } from "@codemux/pool";
import { approvePins, listPending, pinFileOfConfig, readPinFile } from "@codemux/hooks";
import type { Command } from "commander";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { GlobalOptions, RunContext } from "../context";
import { UsageError } from "../errors";
import { codemuxHome, findConfigFile } from "@codemux/server";

/** `codemux approve SERVER[__TOOL]`: lets a tool the pin plugin quarantined (its definition changed, or its server is new) through again. */
export function registerApprove(program: Command, context: RunContext): void {
  program
    .command("approve")
    .description("approve tools the pin plugin quarantined: SERVER (all its waiting tools) or SERVER__TOOL")
    .argument("[target]", "SERVER or SERVER__TOOL")
    .option("--list", "list the tools waiting for approval, and why")
    .option("--file <file>", "the pin file (default: plugins.pin.file of the config, else pins.json in $CODEMUX_HOME or ~/.codemux)")
    .action(async (target: string | undefined, options: { list?: boolean; file?: string }, command: Command) => {
      const file = options.file ? resolve(options.file) : pinFileOf(command.optsWithGlobals<GlobalOptions>().config);
      if (options.list || target === undefined) {
        const pending = listPending(await readPinFile(file));
        context.stdout.write(
          pending.length ? `Waiting for approval (${file}):\n${pending.map((p) => `  ${p}`).join("\n")}\n` : `Nothing waits for approval (${file}).\n`,
        );
        return;
      }
      const { approved, pending } = await approvePins(file, target);
      if (approved.length === 0) {
        throw new UsageError(
          `Nothing named "${target}" waits for approval in ${file}. ${pending.length ? `Waiting: ${pending.join("; ")}.` : "No tool waits for approval."}`,
        );
      }
      context.stdout.write(`Approved ${approved.join(", ")}; a running codemux lets ${approved.length === 1 ? "it" : "them"} through from the next call.\n`);
    });
}

/** The pin file of the config codemux would read, else the default. */
function pinFileOf(configOption: string | undefined): string {
  const candidate = findConfigFile(configOption ? { configPath: configOption } : {})?.file;
  let config: unknown;
  if (candidate) {
    try {
      config = parseJsonc(readFileSync(candidate, "utf8"), candidate).value;
    } catch {
      // An unreadable config is reported by the commands that need it; here the default file is the answer.
    }
  }
  return pinFileOfConfig({ config, configDir: candidate ? dirname(candidate) : process.cwd(), dataDir: codemuxHome() });
}
