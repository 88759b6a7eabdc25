import { parseJsonc } from "@codemux/pool";
import { explainPolicy, findConfigFile, policiesOf } from "@codemux/server";
import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import type { GlobalOptions, RunContext } from "../context";
import { UsageError } from "../errors";

/** `codemux policy check PRINCIPAL SERVER__TOOL`: which rule decides, whether the tool is seen and may be called, and why. */
export function registerPolicy(program: Command, context: RunContext): void {
  const policy = program.command("policy").description("the config's policies: who sees and may call what");
  policy
    .command("check")
    .description("explain the decision for a principal and a tool: the rule that matched, seen or hidden, read-only, limits")
    .argument("<principal>", 'a principal id: "token:<name>", "oauth:<issuer>#<subject>", "local" or "anonymous"')
    .argument("<tool>", "the tool, as server__tool")
    .option("--groups <list>", "groups the principal has, comma-separated (a token's groups, an OAuth group claim)", commaList)
    .option("--scopes <list>", "scopes the principal holds, comma-separated", commaList)
    .action(async function (this: Command, principal: string, tool: string) {
      const options = this.opts<{ groups?: string[]; scopes?: string[] }>();
      const configOption = this.optsWithGlobals<GlobalOptions>().config;
      const found = findConfigFile(configOption ? { configPath: configOption } : {});
      if (found === undefined) throw new UsageError("No config file found, so there are no policies; give one with --config FILE.");
      let text: string;
      try {
        text = await readFile(found.file, "utf8");
      } catch (error) {
        throw new UsageError(`Cannot read the config ${found.file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); check the path.`);
      }
      const policies = policiesOf(parseJsonc(text, found.file).value, found.file);
      const decision = explainPolicy(
        policies,
        { principal, ...(options.groups ? { groups: options.groups } : {}), ...(options.scopes ? { scopes: options.scopes } : {}) },
        tool,
      );
      context.stdout.write(`${decision.text}\n`);
      // Scripts can branch on it: 0 when the tool is seen, 1 when it is hidden.
      if (!decision.visible) context.exitCode = 1;
    });
}

function commaList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}
