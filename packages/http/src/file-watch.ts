import { createHash } from "node:crypto";
import { readFileSync, statSync, watch, type FSWatcher, type Stats } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname } from "node:path";

export interface FileWatchOptions {
  /** Changes closer together than this are reported once; editors write in several steps. */
  debounceMs: number;
  /** The file's stat is also polled this often (0: not), for file systems whose events do not arrive (network and container mounts). */
  pollMs: number;
  /** Why watching failed or stopped. */
  onError: (message: string) => void;
}

/**
 * Calls `onChange` (debounced) when `file` may have changed. The folder is watched, not the file,
 * because editors replace files by renaming a new one over them. Returns the function that stops it.
 */
export function watchFileChanges(file: string, onChange: () => void, options: FileWatchOptions): () => void {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const changed = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, options.debounceMs);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
      if (name === null || name === basename(file)) changed();
    });
    watcher.on("error", (error) => options.onError(error.message));
  } catch (error) {
    options.onError((error as Error).message);
  }
  // Our own poll, not fs.watchFile: its first stat runs on the thread pool after it returns, so a change made
  // meanwhile became its baseline and was never seen. The baseline here is taken now.
  let last = statOrUndefined(file);
  let polling = false;
  const poll = () => {
    if (polling) return;
    polling = true;
    stat(file)
      .then(
        (now) => {
          if (last === undefined || now.mtimeMs !== last.mtimeMs || now.size !== last.size || now.ino !== last.ino) changed();
          last = now;
        },
        () => undefined,
      )
      .finally(() => {
        polling = false;
      });
  };
  const poller = options.pollMs > 0 ? setInterval(poll, options.pollMs) : undefined;
  poller?.unref();
  return () => {
    closed = true;
    clearTimeout(timer);
    clearInterval(poller);
    watcher?.close();
  };
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

export interface FileReloader {
  /** Reads the file now and applies it if it changed since the last good one. */
  reloadNow(): Promise<void>;
  close(): void;
}

export interface ReloadOnChangeOptions extends FileWatchOptions {
  file: string;
  /** Applies the file's new text; returns false when it was not good (the last good one keeps serving and is compared next time). */
  apply: (text: string) => Promise<boolean>;
}

/**
 * Applies a file's content each time it changes, one apply at a time. The content at start counts
 * as applied; an unreadable file (mid-rename, deleted) changes nothing.
 */
export function reloadOnChange(options: ReloadOnChangeOptions): FileReloader {
  let lastHash: string | undefined;
  let running: Promise<void> = Promise.resolve();
  const digest = (text: string) => createHash("sha256").update(text).digest("hex");
  const apply = async (): Promise<void> => {
    let text: string;
    try {
      text = await readFile(options.file, "utf8");
    } catch {
      return;
    }
    const hash = digest(text);
    if (hash !== lastHash && (await options.apply(text))) lastHash = hash;
  };
  const reloadNow = () => {
    running = running.then(apply, apply);
    return running;
  };
  // The baseline is read now, at start, not later: a change made before a later read would become the baseline and never be applied.
  try {
    lastHash = digest(readFileSync(options.file, "utf8"));
  } catch {
    lastHash = undefined;
  }
  const stop = watchFileChanges(options.file, () => void reloadNow(), options);
  return { reloadNow, close: stop };
}
