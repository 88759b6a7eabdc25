import { CLI_HINTS } from "@codemux/server";
import { Option, type Command } from "commander";
import { withCore, type RunContext } from "../context";
import { positiveInt, printAnswer } from "./shared";

/** `codemux search`: the search_tools answer the model gets. */
export function registerSearch(program: Command, context: RunContext): void {
  program
    .command("search")
    .description("search the tools, as the model does with search_tools")
    .argument("<query...>", "what you want to do")
    .option("-n, --limit <n>", "how many results", positiveInt, 10)
    .option("-s, --server <name>", "only this server")
    .addOption(new Option("-d, --detail <detail>", "how much to show").choices(["name", "summary", "full"]).default("summary"))
    .action(async (query: string[], options: { limit: number; server?: string; detail: string }, command: Command) => {
      await withCore(command, context, async (core) => {
        const args = { query: query.join(" "), limit: options.limit, detail: options.detail, ...(options.server ? { server: options.server } : {}) };
        printAnswer(context, await core.surface("code", { hints: CLI_HINTS }).callTool("search_tools", args, { session: core.session(), origin: "cli" }));
      });
    });
}
