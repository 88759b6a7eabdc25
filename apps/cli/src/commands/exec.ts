import { CLI_HINTS } from "@codemux/server";
import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import { withCore, type RunContext } from "../context";
import { UsageError } from "../errors";
import { answerText, positiveInt, printAnswer } from "./shared";

/** `codemux exec`: a snippet from a file or stdin, answered as execute_code answers. */
export function registerExec(program: Command, context: RunContext): void {
  program
    .command("exec")
    .description("run a TypeScript snippet as execute_code would (FILE, or - for stdin)")
    .argument("<file>", "snippet file, or - to read stdin")
    .option("-t, --timeout <ms>", "time limit", positiveInt, 30_000)
    .option("--keep-bundle <dir>", "keep the snippet, its bundle and source map under DIR (or CODEMUX_DEBUG_EXEC=1)")
    .action(async (file: string, options: { timeout: number; keepBundle?: string }, command: Command) => {
      const code =
        file === "-"
          ? await readStdin()
          : await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
              throw new UsageError(`Cannot read snippet ${file} (${error.code ?? error.message}).`);
            });
      await withCore(command, context, { ...(options.keepBundle ? { keepBundlesDir: options.keepBundle } : {}) }, async (core) => {
        const result = await core
          .surface("code", { hints: CLI_HINTS })
          .callTool("execute_code", { code, timeoutMs: options.timeout }, { session: core.session(), origin: "cli" });
        printAnswer(context, result, prettyJson(answerText(result)));
      });
    });
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
