import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreError } from "../errors";
import { STORE_KEY_PATTERN, listed, newEntry, visible, type Store, type StoreEntry, type StoreWriteOptions } from "./store";

export interface FileStoreOptions {
  /** The folder (created with owner-only permissions); a private temporary folder when absent, removed by `clear`. */
  dir?: string;
  now?: () => number;
}

/**
 * A Store of files, one per key, written atomically (a temporary file, then a rename) with
 * `fs/promises`, so nothing blocks the event loop and a crash never leaves half an entry. Expiry and
 * owners are kept in memory: entries that have them (kept results) do not outlive the process,
 * while plain entries (the catalog cache) are read back after a restart.
 */
export class FileStore implements Store {
  readonly #entries = new Map<string, StoreEntry>();
  readonly #dirOption: string | undefined;
  readonly #now: () => number;
  #dir: Promise<string> | undefined;

  constructor(options: FileStoreOptions = {}) {
    this.#dirOption = options.dir;
    this.#now = options.now ?? Date.now;
  }

  async write(key: string, data: string, options: StoreWriteOptions = {}): Promise<StoreEntry> {
    const path = await this.#path(key);
    const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await writeFile(temp, data, { mode: 0o600 });
      await rename(temp, path);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw new StoreError(`write ${path}`, { cause: error });
    }
    const entry = newEntry(key, data, options, this.#now());
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  async read(key: string, options: { owner?: string } = {}): Promise<string | undefined> {
    if (!(await this.#readable(key, options.owner))) return undefined;
    try {
      return await readFile(await this.#path(key), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new StoreError(`read ${key}`, { cause: error });
    }
  }

  async stat(key: string, options: { owner?: string } = {}): Promise<StoreEntry | undefined> {
    return (await this.#readable(key, options.owner)) ? this.#entries.get(key) : undefined;
  }

  async list(options: { owner?: string } = {}): Promise<StoreEntry[]> {
    await this.#expire();
    const now = this.#now();
    return [...this.#entries.values()].filter((e) => listed(e, options.owner, now));
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
    await unlink(await this.#path(key)).catch(() => undefined);
  }

  async clear(): Promise<void> {
    const keys = [...this.#entries.keys()];
    this.#entries.clear();
    if (!this.#dir) return;
    if (this.#dirOption === undefined) {
      await rm(await this.#dir, { recursive: true, force: true });
      this.#dir = undefined;
      return;
    }
    await Promise.all(keys.map(async (key) => unlink(await this.#path(key)).catch(() => undefined)));
  }

  /** Known entries obey expiry and owner; unknown keys are plain entries of an earlier run. */
  async #readable(key: string, owner: string | undefined): Promise<boolean> {
    const entry = this.#entries.get(key);
    if (!entry) return STORE_KEY_PATTERN.test(key);
    if (visible(entry, owner, this.#now())) return true;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.#now()) await this.delete(key);
    return false;
  }

  async #expire(): Promise<void> {
    const now = this.#now();
    const expired = [...this.#entries.values()].filter((e) => e.expiresAt !== undefined && e.expiresAt <= now);
    await Promise.all(expired.map((e) => this.delete(e.key)));
  }

  async #path(key: string): Promise<string> {
    if (!STORE_KEY_PATTERN.test(key)) throw new TypeError(`Store keys are names, not paths: ${JSON.stringify(key.slice(0, 100))}`);
    this.#dir ??= this.#makeDir();
    return join(await this.#dir, key);
  }

  async #makeDir(): Promise<string> {
    try {
      if (this.#dirOption === undefined) return await mkdtemp(join(tmpdir(), "codemux-"));
      await mkdir(this.#dirOption, { recursive: true, mode: 0o700 });
      return this.#dirOption;
    } catch (error) {
      this.#dir = undefined;
      throw new StoreError(`create the folder ${this.#dirOption ?? tmpdir()}`, { cause: error });
    }
  }
}
