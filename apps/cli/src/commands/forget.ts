import { isPrincipalId } from "@codemux/core";
import { createJobs } from "@codemux/jobs";
import { Codemux, codemuxHome, findConfigFile, retentionOf, type ForgetReport } from "@codemux/server";
import type { Command } from "commander";
import { forgetAlso, pluginsOf, readRawConfig, type GlobalOptions, type RunContext } from "../context";
import { UsageError } from "../errors";
import { stderrLogger } from "../logger";
import { daemonPidfiles, liveDaemon } from "./status";

const KINDS: Record<string, [string, string]> = {
  results: ["kept result", "kept results"],
  skills: ["skill", "skills"],
  jobs: ["job (with its transcript)", "jobs (with their transcripts)"],
  audit: ["audit line", "audit lines"],
  memory: ["memory", "memories"],
};

/** `codemux forget PRINCIPAL`: deletes what codemux keeps on this machine for one principal. */
export function registerForget(program: Command, context: RunContext): void {
  program
    .command("forget")
    .description(
      "delete what codemux keeps for a principal (token:NAME, oauth:ISSUER#SUBJECT, local): its skills, background jobs with their transcripts, its audit log lines and its memories (the memory plugin)",
    )
    .argument("<principal>", 'the principal as logs and the audit log name it, e.g. "token:ci"')
    .action(async (principal: string, _options: unknown, command: Command) => {
      if (!isPrincipalId(principal))
        throw new UsageError(`"${principal.slice(0, 80)}" is not a principal: give its id as the audit log names it, such as token:ci.`);
      // A running gateway holds this principal's results and jobs in memory, and would write its segment back.
      for (const pidfile of daemonPidfiles(command)) {
        const daemon = await liveDaemon(pidfile);
        if (daemon)
          throw new UsageError(
            `codemux runs in the background at ${daemon.url} (pid ${daemon.pid}) and holds what it keeps in memory: ask it (curl -X DELETE ${daemon.url}/v1/principals/${encodeURIComponent(principal)} -H "Authorization: Bearer $ADMIN_TOKEN", a token with the admin scope), or stop it (codemux stop) and run forget again.`,
          );
      }
      const report = await forgetOffline(principal, command.optsWithGlobals<GlobalOptions>().config);
      const parts = Object.entries(report).map(([kind, count]) => `${count} ${(KINDS[kind] ?? [kind, kind])[count === 1 ? 0 : 1]}`);
      context.stdout.write(`Forgot ${principal}: ${parts.join(", ")}.\n`);
    });
}

/** Opens codemux's data folder without starting a server, and deletes what it keeps for `principal`. */
async function forgetOffline(principal: string, configPath: string | undefined): Promise<ForgetReport> {
  const logger = stderrLogger("warn");
  const file = findConfigFile(configPath ? { configPath } : {})?.file;
  const raw = await readRawConfig(file);
  const plugins = await pluginsOf({ config: raw && file ? { raw, file } : undefined, logger, retention: file ? retentionOf(raw, file) : undefined });
  const jobs = createJobs({ dataDir: codemuxHome(), logger });
  const core = new Codemux({ config: { source: "forget", servers: [] }, dataDir: codemuxHome(), logger });
  forgetAlso(core, jobs, plugins);
  try {
    return await core.forget(principal);
  } finally {
    await jobs.close();
    await plugins?.close();
    await core.close();
  }
}
