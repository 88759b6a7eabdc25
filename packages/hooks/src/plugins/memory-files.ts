import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The memories (`M`) of each principal in a file of its own (named by a hash of the principal), read once
 * and then kept; changes go one at a time per principal, and the file is always a whole, recent list.
 */
export class MemoryFiles<M> {
  readonly #dir: () => string;
  readonly #maxEntries: number;
  readonly #warn: (message: string) => void;
  readonly #loaded = new Map<string, Promise<M[]>>();
  /** One write at a time per principal, in order: the file always holds a whole, recent list. */
  readonly #writing = new Map<string, Promise<void>>();
  /** One change of a principal's list at a time: two calls ending together each add their memory, neither over the other's. */
  readonly #updating = new Map<string, Promise<unknown>>();

  /** `dir` is read when a file is: the folder may be known only once the plugin is initialized. */
  constructor(options: { dir: () => string; maxEntries: number; warn: (message: string) => void }) {
    this.#dir = options.dir;
    this.#maxEntries = options.maxEntries;
    this.#warn = options.warn;
  }

  #fileOf(principal: string): string {
    return join(this.#dir(), `${createHash("sha256").update(principal).digest("hex").slice(0, 32)}.json`);
  }

  /** The principal's memories, newest first (none when it has no file, or one that cannot be read). */
  load(principal: string): Promise<M[]> {
    let list = this.#loaded.get(principal);
    if (!list) {
      list = readFile(this.#fileOf(principal), "utf8").then(
        (text) => {
          const parsed = JSON.parse(text) as unknown;
          return Array.isArray(parsed) ? (parsed as M[]).slice(0, this.#maxEntries) : [];
        },
        () => [],
      );
      this.#loaded.set(principal, list);
    }
    return list;
  }

  /** Changes the principal's list (`change` gets it as `load` gives it, after the changes before) and writes it. */
  update<T>(principal: string, change: (memories: M[]) => { next: M[]; value: T }, load: (principal: string) => Promise<M[]>): Promise<T> {
    const done = (this.#updating.get(principal) ?? Promise.resolve()).then(async () => {
      const { next, value } = change(await load(principal));
      await this.#save(principal, next);
      return value;
    });
    this.#updating.set(
      principal,
      done.catch(() => undefined),
    );
    return done;
  }

  /** Deletes the principal's file. */
  async remove(principal: string): Promise<void> {
    await rm(this.#fileOf(principal), { force: true });
  }

  /** Resolves once every write under way is done. */
  async close(): Promise<void> {
    await Promise.all(this.#writing.values());
  }

  #save(principal: string, memories: M[]): Promise<void> {
    this.#loaded.set(principal, Promise.resolve(memories));
    const file = this.#fileOf(principal);
    const dir = this.#dir();
    const next = (this.#writing.get(principal) ?? Promise.resolve()).then(async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // Written whole and renamed over: a crash leaves the last list, never half of one.
      await writeFile(`${file}.tmp`, JSON.stringify(memories), { mode: 0o600 });
      await rename(`${file}.tmp`, file);
    });
    const settled = next.catch((error: Error) => this.#warn(`memory: could not keep a memory (${error.message})`));
    this.#writing.set(principal, settled);
    return settled;
  }
}
