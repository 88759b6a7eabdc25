import { loadConfigFile, type PoolConfig } from "@codemux/pool";
import { resolve } from "node:path";
import { reloadOnChange, type FileReloader } from "./file-watch";
import type { LogSink } from "./log";
import type { ReloadSummary } from "./options";

/** What the watcher needs of the core: `Codemux.reload` applies a new config in place. */
export interface Reloadable {
  reload(config: PoolConfig): Promise<ReloadSummary>;
}

export interface WatchConfigOptions {
  file: string;
  core: Reloadable;
  /** Changes closer together than this are applied once; 300 ms by default (editors write in several steps). */
  debounceMs?: number;
  log: LogSink;
  /** Reads and checks the file; `loadConfigFile` from @codemux/pool by default. */
  load?: (file: string) => Promise<PoolConfig>;
  /** Called after each attempt (tests and the status line). */
  onResult?: (result: { ok: true; summary: ReloadSummary } | { ok: false; error: string }) => void;
}

export type ConfigWatcher = FileReloader;

/**
 * Watches a config file and applies each good edit with `core.reload` (unchanged servers keep their
 * connection). A bad edit is reported and the last good config keeps serving.
 */
export function watchConfig(options: WatchConfigOptions): ConfigWatcher {
  const file = resolve(options.file);
  const load = options.load ?? ((f: string) => loadConfigFile(f));
  const log = (level: string, msg: string, fields: Record<string, unknown> = {}) =>
    options.log({ time: new Date().toISOString(), level, msg, file, ...fields });
  return reloadOnChange({
    file,
    debounceMs: options.debounceMs ?? 300,
    pollMs: 0,
    onError: (error) => log("warn", "config watcher failed; edits are no longer applied", { error }),
    apply: async () => {
      try {
        const config = await load(file);
        const summary = await options.core.reload(config);
        log("info", "config reloaded", { ...summary });
        options.onResult?.({ ok: true, summary });
        return true;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        log("warn", "config not reloaded; the last good config keeps serving", { error: message.slice(0, 1000) });
        options.onResult?.({ ok: false, error: message });
        return false;
      }
    },
  });
}
