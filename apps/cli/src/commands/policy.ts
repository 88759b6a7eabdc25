import { principalOfName, splitQualifiedName } from "@codemux/core";
import { parseJsonc, readConfigText, ServerUnavailableError } from "@codemux/pool";
import { explainPolicy, findConfigFile, policiesOf, type CatalogFacts, type CodemuxCalls, type CodemuxQueries } from "@codemux/server";
import type { Command } from "commander";
import { withCore, type GlobalOptions, type RunContext } from "../context";
import { UsageError } from "../errors";

/** `codemux policy check PRINCIPAL SERVER__TOOL`: which rule decides, whether the tool exists, is seen and may be called, and why. */
export function registerPolicy(program: Command, context: RunContext): void {
  const policy = program.command("policy").description("the config's policies: who sees and may call what");
  policy
    .command("check")
    .description(
      "explain the decision for a principal and a tool: the rule that matched, seen or hidden, whether the config's servers have the tool and what its annotations decide (read-only), limits; exit 0 when it may be called, 1 when not",
    )
    .argument("<principal>", 'a principal id: "token:<name>" (a bare name means that), "oauth:<issuer>#<subject>", "local" or "anonymous"')
    .argument("<tool>", "the tool, as server__tool")
    .option("--groups <list>", "groups the principal has, comma-separated (a token's groups, an OAuth group claim)", commaList)
    .option("--scopes <list>", "scopes the principal holds, comma-separated", commaList)
    .action(async function (this: Command, name: string, tool: string) {
      const options = this.opts<{ groups?: string[]; scopes?: string[] }>();
      const configOption = this.optsWithGlobals<GlobalOptions>().config;
      const found = findConfigFile(configOption ? { configPath: configOption } : {});
      if (found === undefined) throw new UsageError("No config file found, so there are no policies; give one with --config FILE.");
      const policies = policiesOf(parseJsonc(await readConfigText(found.file), found.file).value, found.file);
      // The config's servers say whether the tool exists and whether they mark it read-only, which the rules alone cannot.
      const catalog = await withCore(this, context, (core) => catalogFacts(core, tool));
      const subject = {
        principal: principalOfName(name),
        ...(options.groups ? { groups: options.groups } : {}),
        ...(options.scopes ? { scopes: options.scopes } : {}),
      };
      const decision = explainPolicy(policies, subject, { name: tool, catalog });
      context.stdout.write(`${decision.text}\n`);
      // Scripts can branch on it: 0 when a call would go through (or depends only on what could not be read), 1 when hidden, missing or refused.
      if (!decision.visible || decision.callable === false) context.exitCode = 1;
    });
}

/** What the config's servers say of `name`: its annotations, or why it is not there or not known. */
async function catalogFacts(core: CodemuxCalls & Pick<CodemuxQueries, "status">, name: string): Promise<CatalogFacts> {
  const server = splitQualifiedName(name)?.server;
  const servers = core.status().map((s) => s.name);
  if (server === undefined) return { state: "missing", why: `names look like "server__tool" (servers here: ${servers.join(", ") || "none"}).` };
  if (!servers.includes(server)) return { state: "missing", why: `the config has no server "${server}" (its servers: ${servers.join(", ") || "none"}).` };
  try {
    return { state: "found", annotations: (await core.resolve(name)).tool.annotations ?? {} };
  } catch (error) {
    const why = (error as Error).message;
    return ServerUnavailableError.isInstance(error) ? { state: "unknown", why } : { state: "missing", why };
  }
}

function commaList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}
