import { writeModuleTree } from "@codemux/codegen/node";
import type { Command } from "commander";
import { resolve } from "node:path";
import { withCore, type RunContext } from "../context";

/** `codemux codegen`: the wrapper modules on disk, a tree that type-checks with tsc. */
export function registerCodegen(program: Command, context: RunContext): void {
  program
    .command("codegen")
    .description("write the typed wrapper modules to disk (they type-check with tsc --noEmit after npm install)")
    .requiredOption("-o, --out <dir>", "output directory")
    .action(async (options: { out: string }, command: Command) => {
      await withCore(command, context, async (core) => {
        const out = resolve(options.out);
        const { files } = await writeModuleTree(core.generatedModules, out);
        context.stdout.write(`Wrote ${files} files for ${core.tools().size} tools of ${core.tools().servers().length} servers to ${out}\n`);
      });
    });
}
