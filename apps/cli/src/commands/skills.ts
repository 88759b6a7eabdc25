import { CLI_HINTS, type CodemuxPorts } from "@codemux/server";
import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import { loadCodemuxConfig, openStoreClient, storeSettingOf } from "@codemux/runtime";
import { withCore, type GlobalOptions, type RunContext } from "../context";
import { UsageError } from "../errors";
import { printAnswer } from "./shared";

/** `codemux skills save|list|delete`: the skills snippets import from mcp/skills/<name>, as save_skill keeps them. */
export function registerSkills(program: Command, context: RunContext): void {
  const skills = program.command("skills").description("saved skills: modules mcp/skills/<name> that snippets import");

  skills
    .command("save")
    .description("type-check FILE against the current tool modules and save it as mcp/skills/NAME")
    .argument("<name>", "the skill's name, also its exported function's")
    .argument("<file>", "a TypeScript module exporting async function NAME(input): Promise<output>")
    .option("-d, --description <text>", "what it does (search finds it by this); default: the file's first /** comment */")
    .action(async (name: string, file: string, options: { description?: string }, command: Command) => {
      const code = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
        throw new UsageError(`Cannot read skill ${file} (${error.code ?? error.message}).`);
      });
      const description =
        options.description ??
        /^\s*\/\*\*([\s\S]{0,2000}?)\*\//
          .exec(code)?.[1]
          ?.replace(/^\s*\* ?/gm, "")
          .trim();
      if (!description) throw new UsageError("Say what the skill does with --description, or in a /** comment */ at the top of the file.");
      await withSkills(command, context, async (core) => {
        const result = await core
          .surface("code", { hints: CLI_HINTS })
          .callTool("save_skill", { name, code, description }, { session: core.session(), origin: "cli" });
        printAnswer(context, result);
      });
    });

  skills
    .command("list")
    .description("list your skills and the project's, flagging those whose tools are gone or changed")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }, command: Command) => {
      await withSkills(command, context, async (core) => {
        const listed = core.skills(core.session().principal);
        if (options.json) {
          context.stdout.write(
            `${JSON.stringify(
              listed.map(({ code: _code, ...skill }) => skill),
              null,
              2,
            )}\n`,
          );
          return;
        }
        if (listed.length === 0) context.stdout.write("No skills yet: codemux skills save NAME FILE, or save_skill from a client.\n");
        for (const skill of listed) {
          context.stdout.write(
            `mcp/skills/${skill.name}  ${skill.signature}${skill.origin === "project" ? "  (project)" : ""}\n  ${skill.description.split("\n")[0]}\n`,
          );
          if (skill.problems.length) context.stdout.write(`  check it: ${skill.problems.join("; ")}\n`);
        }
        if (listed.some((s) => s.problems.length)) context.exitCode = 1;
      });
    });

  skills
    .command("delete")
    .description("delete one of your skills")
    .argument("<name>")
    .action(async (name: string, _options: unknown, command: Command) => {
      await withSkills(command, context, async (core) => {
        const result = await core
          .surface("code", { hints: CLI_HINTS })
          .callTool("save_skill", { name, delete: true }, { session: core.session(), origin: "cli" });
        printAnswer(context, result);
      });
    });
}

/**
 * Runs `work` on a core whose skills are the deployment's when a Redis store is set (CODEMUX_STORE, the
 * config's `store`): listed, saved and deleted there, as every instance sees them. Only the skills go
 * through Redis here: a one-shot command takes no queued jobs and keeps no results there.
 */
async function withSkills(command: Command, context: RunContext, work: (core: CodemuxPorts) => Promise<void>): Promise<void> {
  const { config } = command.optsWithGlobals<GlobalOptions>();
  const loaded = await loadCodemuxConfig({ configPath: config, inline: context.inline });
  const shared = await openStoreClient(storeSettingOf({}, loaded.raw, loaded.file), {
    unreachable: (where, reason) =>
      `Redis at ${where} is not reachable (${reason}), and the skills are kept there; start it (or fix CODEMUX_STORE) and try again.`,
  });
  try {
    const skillsOnly = shared.skillShelf
      ? { shared: { setting: shared.setting, instanceId: shared.instanceId, skillShelf: shared.skillShelf, close: async () => undefined } }
      : {};
    await withCore(command, context, { ...skillsOnly, config: loaded }, work);
  } finally {
    await shared.close();
  }
}
