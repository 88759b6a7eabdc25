import { Option, type Command } from "commander";
import { copyFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import type { RunContext } from "../context";
import { UsageError } from "../errors";
import { type Json, readJsonFile, writeAtomically } from "../json-file";
import { launchCommand, launchForm } from "../launch";
import { checkCodemuxConfig, codemuxConfigPath, describePlan, maskedDiff, planMove, writeCodemuxConfig } from "../move-plan";

export const CLIENTS = ["claude-desktop", "cursor", "claude-code", "vscode"] as const;
export type ClientName = (typeof CLIENTS)[number];

/** Where each client keeps its user-level MCP servers on this platform, and under which key. */
export function clientConfigPath(client: ClientName, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const home = env.HOME || env.USERPROFILE || homedir();
  const appData =
    platform === "win32"
      ? env.APPDATA || join(home, "AppData", "Roaming")
      : platform === "darwin"
        ? join(home, "Library", "Application Support")
        : env.XDG_CONFIG_HOME || join(home, ".config");
  switch (client) {
    case "claude-desktop":
      return join(appData, "Claude", "claude_desktop_config.json");
    case "cursor":
      return join(home, ".cursor", "mcp.json");
    case "claude-code":
      // User scope of Claude Code: the top-level mcpServers of ~/.claude.json (what `claude mcp add -s user` writes).
      return join(home, ".claude.json");
    case "vscode":
      return join(appData, "Code", "User", "mcp.json");
  }
}

function serversKey(client: ClientName): "mcpServers" | "servers" {
  return client === "vscode" ? "servers" : "mcpServers";
}

/** The one entry codemux puts in a client's config: `node <this CLI> --config FILE`, or `npx -y codemux --config FILE` when `npx` asks for it. */
export function codemuxEntry(client: ClientName, codemuxConfig: string, { npx = false }: { npx?: boolean } = {}): Json {
  return { ...(client === "vscode" ? { type: "stdio" } : {}), ...launchCommand(["--config", codemuxConfig], { npx }) };
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

/** `codemux install CLIENT`: moves the client's servers into codemux's config and makes codemux its one entry. */
export function registerInstall(program: Command, context: RunContext): void {
  program
    .command("install")
    .description("set codemux up in a client: move its servers into codemux's config (a backup is kept) and make codemux its one entry")
    .argument("<client>", `one of ${CLIENTS.join(", ")}`)
    .option("--file <path>", "the client's config file (default: where the client keeps it on this platform)")
    .addOption(new Option("--local", "start codemux as node <this CLI's path> (the default: codemux is not on the npm registry yet)").conflicts("npx"))
    .option("--npx", "start codemux as npx -y codemux, from the npm registry (once codemux is released there)")
    .option("--dry-run", "show the changes as a diff (secrets masked), write nothing")
    .option("-y, --yes", "do not ask (needed when not in a terminal)")
    .action(async (client: string, options: { file?: string; npx?: boolean; dryRun?: boolean; yes?: boolean }, command: Command) => {
      if (!(CLIENTS as readonly string[]).includes(client)) throw new UsageError(`Unknown client "${client}"; use one of ${CLIENTS.join(", ")}.`);
      const name = client as ClientName;
      const file = resolve(options.file ?? clientConfigPath(name));
      const codemuxConfig = codemuxConfigPath(command);
      const original = await readJsonFile(file, { missingOk: true });
      const key = serversKey(name);
      const entries = original.data[key] ?? {};
      if (typeof entries !== "object" || entries === null || Array.isArray(entries)) throw new UsageError(`${file}: "${key}" is not an object of servers.`);
      const codemux = await readJsonFile(codemuxConfig, { missingOk: true });
      const plan = planMove({ entries: entries as Json, codemux, suffix: name.replace(/-/g, "") });
      if (plan.servers === 0) {
        throw new UsageError(
          `${original.text === undefined ? `${file} does not exist` : `${file} lists no servers codemux can serve`}, and codemux's config ${codemuxConfig} has none either, so nothing was written. Add your servers to one of them (codemux import FILE copies a file's), then run codemux install ${name} again.`,
          1,
        );
      }
      // Until codemux is on the npm registry, the entry is this copy by its path (a checkout or an installed package); --npx asks for the registry form.
      const form = { npx: options.npx ?? false };
      const entry = codemuxEntry(name, codemuxConfig, form);
      // The client keeps what cannot move, and codemux as its one server entry.
      const kept = Object.fromEntries(plan.kept.map((k) => [k.name, (entries as Json)[k.name]]));
      const clientData = { ...original.data, [key]: { codemux: entry, ...kept } };
      const clientAfter = `${JSON.stringify(clientData, null, 2)}\n`;
      const codemuxChanges = plan.after !== codemux.text;
      const clientChanges = original.text === undefined || JSON.stringify(clientData) !== JSON.stringify(original.data);
      if (codemuxChanges) checkCodemuxConfig(codemuxConfig, plan.after);
      // The client's file diffed as codemux reads it: JSONC comments and the original layout are not kept (the backup keeps them).
      const diff = `${codemuxChanges ? maskedDiff(codemuxConfig, codemux.text === undefined ? undefined : codemux.data, JSON.parse(plan.after) as Json) : ""}${clientChanges ? maskedDiff(file, original.text === undefined ? undefined : original.data, clientData) : ""}`;
      if (!codemuxChanges && !clientChanges) {
        context.stdout.write(`codemux is already the one entry of ${file}; nothing to change.\n`);
        return;
      }
      const noServers = Object.keys(entries).length === 0 ? `${file} lists no servers; codemux serves the ${plan.servers} already in ${codemuxConfig}.\n` : "";
      const starts = `${file} ${options.dryRun ? "would start" : "now starts"} codemux with: ${[entry.command, ...(entry.args as string[])].join(" ")} (${launchForm(form)}).\n`;
      if (options.dryRun) {
        context.stdout.write(`${diff}${describePlan(plan, codemuxConfig, "Moved")}${noServers}${starts}(dry run: nothing written)\n`);
        return;
      }
      if (!options.yes) {
        if (!process.stdin.isTTY)
          throw new UsageError(`Not asking without a terminal: run codemux install ${name} --dry-run to see the changes, then again with --yes.`);
        context.stdout.write(diff);
        if (!(await confirm(`Move ${plan.moved.length} server(s) into ${codemuxConfig} and make codemux the one entry of ${file}?`))) {
          context.stdout.write("Nothing changed.\n");
          return;
        }
      }
      const tightened = codemuxChanges ? await writeCodemuxConfig(codemuxConfig, plan.after, codemux) : "";
      let backup: string | undefined;
      if (original.text !== undefined) {
        backup = `${file}.codemux-backup-${new Date().toISOString().replace(/[:.]/g, "-")}`;
        await copyFile(file, backup);
      }
      if (clientChanges) await writeAtomically(file, clientAfter, original.mode);
      const comments = backup && original.comments ? `${file} is rewritten as plain JSON: its comments stay in the backup.\n` : "";
      context.stdout.write(
        `${describePlan(plan, codemuxConfig, "Moved")}${noServers}${tightened}${starts}${backup ? `The original is kept in ${backup}.\n` : ""}${comments}Restart ${name} to use it.\n`,
      );
    });
}
