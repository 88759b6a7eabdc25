import type { Command } from "commander";
import { resolve } from "node:path";
import type { RunContext } from "../context";
import { UsageError } from "../errors";
import { type Json, readJsonFile } from "../json-file";
import { checkCodemuxConfig, codemuxConfigPath, describePlan, maskedDiff, planMove, writeCodemuxConfig } from "../move-plan";

/** `codemux import FILE`: copies the servers of a client config (mcpServers or servers) into codemux's config; FILE is not changed. */
export function registerImport(program: Command, context: RunContext): void {
  program
    .command("import")
    .description("copy the servers of a client config file (mcpServers or servers) into codemux's config; the file is not changed")
    .argument("<file>", "a client config: Claude Desktop, Cursor, Claude Code, VS Code (JSON or JSONC)")
    .option("--dry-run", "show the changes as a diff (secrets masked), write nothing")
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
      const plan = planMove({ entries: entries as Json, codemux, suffix: "imported" });
      if (plan.after === codemux.text || plan.moved.length === 0) {
        context.stdout.write(`${describePlan(plan, codemuxConfig, "Copied")}Nothing to import into ${codemuxConfig}.\n`);
        return;
      }
      checkCodemuxConfig(codemuxConfig, plan.after);
      if (options.dryRun) {
        const diff = maskedDiff(codemuxConfig, codemux.text === undefined ? undefined : codemux.data, JSON.parse(plan.after) as Json);
        context.stdout.write(`${diff}${describePlan(plan, codemuxConfig, "Copied")}(dry run: nothing written)\n`);
        return;
      }
      const tightened = await writeCodemuxConfig(codemuxConfig, plan.after, codemux);
      context.stdout.write(
        `${describePlan(plan, codemuxConfig, "Copied")}${tightened}${file} is unchanged; to make codemux its one entry, run codemux install CLIENT.\n`,
      );
    });
}
