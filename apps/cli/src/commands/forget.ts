import { isPrincipalId } from "@codemux/core";
import { createJobs } from "@codemux/jobs";
import { Codemux, codemuxHome, findConfigFile, retentionOf, type ForgetReport } from "@codemux/server";
import type { Command } from "commander";
import { forgetAlso, pluginsOf, readRawConfig, type GlobalOptions, type RunContext } from "../context";
import { openSharedState, storeSettingOf, type SharedState, type StoreFlags } from "../shared-state";
import { UsageError } from "../errors";
import { stderrLogger } from "../logger";
import { daemonPidfiles, liveDaemon } from "./status";

const KINDS: Record<string, [string, string]> = {
  results: ["kept result", "kept results"],
  skills: ["skill", "skills"],
  jobs: ["job (with its transcript)", "jobs (with their transcripts)"],
  audit: ["audit line", "audit lines"],
  memory: ["memory", "memories"],
  sharedJobs: ["job record in Redis", "job records in Redis"],
  cachedAnswers: ["cached answer in Redis", "cached answers in Redis"],
};

/** `codemux forget PRINCIPAL`: deletes what codemux keeps on this machine for one principal, and in the shared store when one is set. */
export function registerForget(program: Command, context: RunContext): void {
  program
    .command("forget")
    .description(
      "delete what codemux keeps for a principal (token:NAME, oauth:ISSUER#SUBJECT, local): its skills, background jobs with their transcripts, its audit log lines and its memories (the memory plugin); with a Redis store, also its kept results, saved skills, memories, job records with their transcripts and results, queued jobs and cached answers there",
    )
    .argument("<principal>", 'the principal as logs and the audit log name it, e.g. "token:ci"')
    .option(
      "--store <store>",
      "also delete what it owns in the Redis store instances share (kept results, saved skills, memories, job records with their transcripts and results, queued jobs, cached answers): redis://HOST:PORT; else $CODEMUX_STORE, else the config's store",
    )
    .option("--store-prefix <prefix>", "the start of every key (default codemux:); else $CODEMUX_STORE_PREFIX")
    .action(async (principal: string, flags: StoreFlags, command: Command) => {
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
      const { config } = command.optsWithGlobals<GlobalOptions>();
      const file = findConfigFile(config ? { configPath: config } : {})?.file;
      const raw = await readRawConfig(file);
      const shared = await openSharedState(storeSettingOf(flags, raw, file), {});
      try {
        if (shared.connection && !shared.connection.up())
          throw new UsageError(
            `Redis at ${shared.connection.where} is not reachable, so nothing was deleted; start it (or fix --store) and run codemux forget again.`,
          );
        const report = await forgetOffline(principal, { file, raw, shared });
        const parts = Object.entries(report).map(([kind, count]) => `${count} ${(KINDS[kind] ?? [kind, kind])[count === 1 ? 0 : 1]}`);
        context.stdout.write(`Forgot ${principal}: ${parts.join(", ")}.\n`);
        // Other instances' own folders are out of this machine's reach.
        if (shared.connection)
          context.stdout.write(
            "Audit lines live in each instance's own CODEMUX_HOME: run codemux forget there too, or DELETE /v1/principals/{principal} on each instance.\n",
          );
      } finally {
        await shared.close();
      }
    });
}

/** Opens codemux's data folder (and the shared store) without starting a server, and deletes what they keep for `principal`. */
async function forgetOffline(
  principal: string,
  { file, raw, shared }: { file: string | undefined; raw: Record<string, unknown> | undefined; shared: SharedState },
): Promise<ForgetReport> {
  const logger = stderrLogger("warn");
  const plugins = await pluginsOf({
    config: raw && file ? { raw, file } : undefined,
    logger,
    retention: file ? retentionOf(raw, file) : undefined,
    // The memory plugin's memories in Redis, forgotten on every instance.
    ...(shared.memories ? { sharedLists: shared.memories } : {}),
  });
  const jobs = createJobs({ dataDir: codemuxHome(), logger });
  const core = new Codemux({
    config: { source: "forget", servers: [] },
    dataDir: codemuxHome(),
    logger,
    // Kept results in Redis: the core's result store finds the principal's through whichever instance kept them.
    ...(shared.resultStore ? { resultStore: shared.resultStore } : {}),
    // Saved skills in Redis: the library deletes the principal's there.
    ...(shared.skillShelf ? { sharedSkills: shared.skillShelf } : {}),
  });
  forgetAlso(core, { jobs, plugins, ...(shared.connection ? { shared } : {}) });
  try {
    return await core.forget(principal);
  } finally {
    await jobs.close();
    await plugins?.close();
    await core.close();
  }
}
