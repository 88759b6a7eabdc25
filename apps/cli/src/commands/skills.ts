import { CLI_HINTS } from "@codemux/server";
import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import { withCore, type RunContext } from "../context";
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
      await withCore(command, context, async (core) => {
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
      await withCore(command, context, async (core) => {
        const listed = core.services.skills.list(core.session().principal);
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
      await withCore(command, context, async (core) => {
        const result = await core
          .surface("code", { hints: CLI_HINTS })
          .callTool("save_skill", { name, delete: true }, { session: core.session(), origin: "cli" });
        printAnswer(context, result);
      });
    });
}
