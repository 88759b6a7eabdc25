import { isPrincipalId, principalOfName } from "@codemux/core";
import { addCounts, forgetOffline, loadCodemuxConfig, openStoreClient, storeSettingOf, type StoreFlags } from "@codemux/runtime";
import { codemuxHome, type ForgetReport } from "@codemux/server";
import type { Command } from "commander";
import type { GlobalOptions, RunContext } from "../context";
import { answers, forgetThrough, localInstances, type LocalInstance } from "../local-admin";
import { UsageError } from "../errors";
import { cliLogger } from "../logger";

const KINDS: Record<string, [string, string]> = {
  results: ["kept result", "kept results"],
  skills: ["skill", "skills"],
  resultFiles: ["result file", "result files"],
  jobs: ["job (with its transcript)", "jobs (with their transcripts)"],
  audit: ["audit line", "audit lines"],
  memory: ["memory", "memories"],
  cache: ["cached answer in memory", "cached answers in memory"],
  activity: ["call on the admin page's Activity", "calls on the admin page's Activity"],
  logins: ["login of its own to a server", "logins of its own to servers"],
  serverFolders: ["server's folder for it (its own instance's)", "servers' folders for it (their own instances')"],
  sharedJobs: ["job record in Redis", "job records in Redis"],
  cachedAnswers: ["cached answer in Redis", "cached answers in Redis"],
};
/** Kinds that say whom forget reached, not what it deleted. */
const REACH = new Set(["instances", "instancesMissed"]);

/** `codemux forget PRINCIPAL`: deletes what codemux keeps for one principal, on this machine, in every instance running, and in the shared store. */
export function registerForget(program: Command, context: RunContext): void {
  program
    .command("forget")
    .description(
      "delete what codemux keeps for a principal: its kept results, skills, background jobs with their transcripts, audit log lines, memories and cached answers (plugins), the files dispatch's resultToFile wrote, the admin page's record of its calls, and its own logins and server instances; every codemux running on this machine is asked through its admin socket, and with a Redis store every instance of it, which also deletes what the principal owns in Redis",
    )
    .argument(
      "<principal>",
      'the principal as logs and the audit log name it, e.g. "token:ci" or "oauth:ISSUER#SUBJECT"; a bare name is a token\'s: "ci" is "token:ci"',
    )
    .option(
      "--store <store>",
      "also delete what it owns in the Redis store instances share (kept results, saved skills, memories, job records with their transcripts and results, queued jobs, cached answers), and ask every instance of it: redis://HOST:PORT; else $CODEMUX_STORE, else the config's store",
    )
    .option("--store-prefix <prefix>", "the start of every key (default codemux:); else $CODEMUX_STORE_PREFIX")
    .action(async (name: string, flags: StoreFlags, command: Command) => {
      if (!isPrincipalId(name)) throw new UsageError(`"${name.slice(0, 80)}" is not a principal: give its id as the audit log names it, such as token:ci.`);
      const principal = principalOfName(name);
      // A running codemux holds the principal's results, skills and calls in memory, and writes its files back: each is asked, or nothing is deleted.
      const running = await localInstances(codemuxHome());
      for (const instance of running) if (!(await answers(instance))) throw unreachable(instance, principal);
      const { config } = command.optsWithGlobals<GlobalOptions>();
      const loaded = await loadCodemuxConfig({ configPath: config });
      const shared = await openStoreClient(storeSettingOf(flags, loaded.raw, loaded.file), {
        unreachable: (where, reason) =>
          `Redis at ${where} is not reachable (${reason}), so nothing was deleted; start it (or fix --store) and run codemux forget again.`,
      });
      try {
        const report: ForgetReport = {};
        for (const instance of running) {
          // Without a store of its own here, the instance asks its store's other instances itself.
          const forgotten = await forgetThrough(instance, principal, { elsewhere: !shared.connection }).catch((error: Error) => {
            throw new UsageError(
              `codemux at ${instance.url} (pid ${instance.pid}) could not forget ${principal}: ${error.message}. Run codemux forget again.`,
              1,
            );
          });
          addCounts(report, forgotten);
        }
        addCounts(report, await forgetOffline(principal, { config: loaded, shared, logger: cliLogger("warn") }));
        const parts = Object.entries(report)
          .filter(([kind]) => !REACH.has(kind))
          .map(([kind, count]) => `${count} ${(KINDS[kind] ?? [kind, kind])[count === 1 ? 0 : 1]}`);
        context.stdout.write(`Forgot ${principal}: ${parts.join(", ")}.\n`);
        const reached = [
          ...running.map((instance) => `the codemux at ${instance.url} (pid ${instance.pid})`),
          ...(shared.connection ? [`${report.instances ?? 0} instance${report.instances === 1 ? "" : "s"} of the Redis store`] : []),
        ];
        if (reached.length > 0) context.stdout.write(`Running instances asked: ${reached.join(", ")}.\n`);
        // A stopped instance's own folder is out of reach from here.
        if (shared.connection)
          context.stdout.write("What a stopped instance wrote in its own CODEMUX_HOME (audit lines, its job journal) stays: run codemux forget there too.\n");
        // Warned above, one line each with its route.
        if (report.instancesMissed) context.exitCode = 1;
      } finally {
        await shared.close();
      }
    });
}

function unreachable(instance: LocalInstance, principal: string): UsageError {
  return new UsageError(
    `codemux runs at ${instance.url} (pid ${instance.pid}) and holds what it keeps in memory, but ${instance.socket ? "does not answer on its admin socket" : "has no admin socket"}, so nothing was deleted: ask it (curl -X DELETE ${instance.url}/v1/principals/${encodeURIComponent(principal)} -H "Authorization: Bearer $ADMIN_TOKEN", a token with the admin scope), or stop it, and run codemux forget again.`,
  );
}
