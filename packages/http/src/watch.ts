import { loadConfigFile, type PoolConfig } from "@codemux/pool";
import { createHash } from "node:crypto";
import { watch, type FSWatcher } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
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

export interface ConfigWatcher {
  /** Reads the file now and applies it if it changed since the last good one. */
  reloadNow(): Promise<void>;
  close(): void;
}

/**
 * Watches a config file and applies each good edit with `core.reload` (unchanged servers keep their
 * connection). A bad edit is reported and the last good config keeps serving. The folder is watched,
 * not the file, because editors replace files by renaming a new one over them.
 */
export function watchConfig(options: WatchConfigOptions): ConfigWatcher {
  const file = resolve(options.file);
  const load = options.load ?? ((f: string) => loadConfigFile(f));
  const debounceMs = options.debounceMs ?? 300;
  let timer: NodeJS.Timeout | undefined;
  let lastHash: string | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;
  const log = (level: string, msg: string, fields: Record<string, unknown> = {}) =>
    options.log({ time: new Date().toISOString(), level, msg, file, ...fields });

  const apply = async (): Promise<void> => {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch {
      // Mid-rename, or deleted: the next event (or none) decides; the running config stays.
      return;
    }
    const hash = createHash("sha256").update(text).digest("hex");
    if (hash === lastHash) return;
    try {
      const config = await load(file);
      const summary = await options.core.reload(config);
      lastHash = hash;
      log("info", "config reloaded", { ...summary });
      options.onResult?.({ ok: true, summary });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log("warn", "config not reloaded; the last good config keeps serving", { error: message.slice(0, 1000) });
      options.onResult?.({ ok: false, error: message });
    }
  };
  const reloadNow = () => {
    running = running.then(apply, apply);
    return running;
  };

  // The config at start is the last good one.
  void readFile(file, "utf8").then(
    (text) => {
      lastHash ??= createHash("sha256").update(text).digest("hex");
    },
    () => undefined,
  );

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
      if (closed || (name !== null && name !== basename(file))) return;
      clearTimeout(timer);
      timer = setTimeout(() => void reloadNow(), debounceMs);
    });
    watcher.on("error", (error) => log("warn", "config watcher failed; edits are no longer applied", { error: error.message }));
  } catch (error) {
    log("warn", "cannot watch the config file; edits need a restart", { error: (error as Error).message });
  }

  return {
    reloadNow,
    close: () => {
      closed = true;
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
