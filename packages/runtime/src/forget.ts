import type { Logger } from "@codemux/core";
import { createJobs } from "@codemux/jobs";
import { Codemux, codemuxHome, type ForgetReport } from "@codemux/server";
import type { CodemuxConfig } from "./config";
import { defaultConfig } from "./default-config";
import type { SharedState } from "./shared-state";
import { forgetAlso, pluginsOf } from "./start";

/**
 * Deletes what codemux keeps for `principal` without starting a server: its data folder (kept results, skills,
 * jobs, plugins' records, result files, servers' own folders) and, with a Redis store, what it owns there,
 * after asking the store's running instances. What `codemux forget` does once the local instances were asked.
 */
export async function forgetOffline(
  principal: string,
  { config: loaded, shared, logger }: { config: CodemuxConfig; shared: SharedState; logger: Logger },
): Promise<ForgetReport> {
  const { raw, file } = loaded;
  const plugins = await pluginsOf({
    config: raw && file ? { raw, file } : undefined,
    logger,
    retention: loaded.retention,
    // The memory plugin's memories in Redis, forgotten on every instance.
    ...(shared.memories ? { sharedLists: shared.memories } : {}),
  });
  const jobs = createJobs({ dataDir: codemuxHome(), logger });
  // The servers are never started: their entries say which keep a folder per principal (the built-in default's memory, served to several).
  const config = loaded.servers ?? defaultConfig({ manyPrincipals: true });
  const core = new Codemux({
    config,
    dataDir: codemuxHome(),
    logger,
    ...(loaded.dispatchFiles ? { dispatchFiles: loaded.dispatchFiles } : {}),
    // Kept results in Redis: the core's result store finds the principal's through whichever instance kept them.
    ...(shared.resultStore ? { resultStore: shared.resultStore } : {}),
    // Saved skills in Redis: the library deletes the principal's there.
    ...(shared.skillShelf ? { sharedSkills: shared.skillShelf } : {}),
  });
  forgetAlso(core, { jobs, plugins, logger, ...(shared.connection ? { shared } : {}) });
  try {
    return await core.forget(principal);
  } finally {
    await jobs.close();
    await plugins?.close();
    await core.close();
  }
}
