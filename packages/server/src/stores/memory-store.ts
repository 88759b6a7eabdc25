import { STORE_KEY_PATTERN, listed, newEntry, visible, type Store, type StoreEntry, type StoreWriteOptions } from "./store";

/** A Store in memory: for tests, and for embedders that keep nothing on disk. */
export class MemoryStore implements Store {
  readonly #entries = new Map<string, { entry: StoreEntry; data: string }>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  async write(key: string, data: string, options: StoreWriteOptions = {}): Promise<StoreEntry> {
    if (!STORE_KEY_PATTERN.test(key)) throw new TypeError(`Store keys are names, not paths: ${JSON.stringify(key.slice(0, 100))}`);
    const entry = newEntry(key, data, options, this.#now());
    this.#entries.delete(key);
    this.#entries.set(key, { entry, data });
    return entry;
  }

  async read(key: string, options: { owner?: string } = {}): Promise<string | undefined> {
    const found = this.#live(key, options.owner);
    return found?.data;
  }

  async stat(key: string, options: { owner?: string } = {}): Promise<StoreEntry | undefined> {
    return this.#live(key, options.owner)?.entry;
  }

  async list(options: { owner?: string } = {}): Promise<StoreEntry[]> {
    const now = this.#now();
    return [...this.#entries.values()].map((e) => e.entry).filter((e) => listed(e, options.owner, now));
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  async clear(): Promise<void> {
    this.#entries.clear();
  }

  #live(key: string, owner: string | undefined): { entry: StoreEntry; data: string } | undefined {
    const found = this.#entries.get(key);
    if (!found) return undefined;
    if (found.entry.expiresAt !== undefined && found.entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return visible(found.entry, owner, this.#now()) ? found : undefined;
  }
}
