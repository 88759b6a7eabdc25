import type { Command } from "commander";
import { resolve } from "node:path";
import type { RunContext } from "../context";
import { UsageError } from "../errors";
import { checkCodemuxConfig, codemuxConfigPath, describePlan, lineDiff, planMove, readJsonFile, writeAtomically } from "./install";

/** `codemux import FILE`: copies the servers of a client config (mcpServers or servers) into codemux's config; FILE is not changed. */
export function registerImport(program: Command, context: RunContext): void {
  program
    .command("import")
    .description("add the servers of a client config file (mcpServers or servers) to codemux's config; the file is not changed")
    .argument("<file>", "a client config: Claude Desktop, Cursor, Claude Code, VS Code (JSON or JSONC)")
    .option("--dry-run", "show the changes as a diff, write nothing")
    .action(async (source: string, options: { dryRun?: boolean }, command: Command) => {
      const file = resolve(source);
      const codemuxConfig = codemuxConfigPath(command);
      if (file === codemuxConfig) throw new UsageError(`${file} is codemux's own config; import another client's file.`);
      const { data } = await readJsonFile(file);
      const key = "mcpServers" in data ? "mcpServers" : "servers" in data ? "servers" : undefined;
      const entries = key ? data[key] : undefined;
      if (typeof entries !== "object" || entries === null || Array.isArray(entries))
        throw new UsageError(`${file} has no "mcpServers" (or "servers") object to import.`);
      const codemux = await readJsonFile(codemuxConfig, { missingOk: true });
      const plan = planMove({ entries: entries as Record<string, unknown>, source: file, codemux, suffix: "imported" });
      if (plan.after === codemux.text || plan.moved.length === 0) {
        context.stdout.write(`${describePlan(plan, codemuxConfig)}Nothing to import into ${codemuxConfig}.\n`);
        return;
      }
      checkCodemuxConfig(codemuxConfig, plan.after);
      if (options.dryRun) {
        context.stdout.write(`${lineDiff(codemuxConfig, plan.before, plan.after)}${describePlan(plan, codemuxConfig)}(dry run: nothing written)\n`);
        return;
      }
      // A new codemux config is owner-only: the imported entries may carry API keys in env and headers.
      await writeAtomically(codemuxConfig, plan.after, codemux.mode ?? 0o600);
      context.stdout.write(`${describePlan(plan, codemuxConfig)}${file} is unchanged; to make codemux its one entry, run codemux install CLIENT.\n`);
    });
}
