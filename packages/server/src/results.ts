import { randomBytes } from "node:crypto";
import { DEFAULT_RESULT_STORE_BYTES, DEFAULT_RESULT_TTL_MS } from "./defaults";
import { ResultNotFoundError } from "./errors";
import { FileStore } from "./stores/file-store";
import type { Store } from "./stores/store";

/** A kept result's handle: `res_` and 12 hex digits. */
export const KEPT_HANDLE_PATTERN = /^res_[0-9a-f]{12}$/;

export interface KeptResult {
  handle: string;
  tool: string;
  bytes: number;
  lines: number;
  createdAt: number;
  expiresAt: number;
  /** The session that made it; no other session can read it. */
  owner: string;
  /** The principal of that session: its retention applies, and `forget` finds it. */
  principal: string;
}

/** Who keeps a result: the session (which alone reads it) and its principal. */
export interface ResultOwner {
  id: string;
  principal: string;
}

export interface ResultStoreOptions {
  /** How long a kept result stays readable. */
  ttlMs?: number;
  /** How long a principal's kept results stay readable (the config's `retention`); `ttlMs` otherwise. */
  ttlFor?: (principal: string) => number | undefined;
  /** Total bytes kept; the oldest results go first past this. */
  maxBytes?: number;
  /** Where the text goes; files in a private temporary folder by default. */
  store?: Store;
  now?: () => number;
}

/**
 * Keeps tool results too large to put in the model's context, so that read_result can page
 * through them. The text goes to a Store (files by default: only metadata stays in memory, so the
 * proxy's memory stays flat however much it keeps), bounded in time and total size, deleted when it
 * expires and when the store is cleared. A handle belongs to the session that made it.
 */
export class ResultStore {
  readonly #results = new Map<string, KeptResult>();
  readonly #ttlMs: number;
  readonly #ttlFor: ((principal: string) => number | undefined) | undefined;
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #store: Store;
  #bytes = 0;

  constructor(options: ResultStoreOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_RESULT_TTL_MS;
    this.#ttlFor = options.ttlFor;
    this.#maxBytes = options.maxBytes ?? DEFAULT_RESULT_STORE_BYTES;
    this.#now = options.now ?? Date.now;
    this.#store = options.store ?? new FileStore({ now: this.#now });
  }

  get size(): number {
    this.#expire();
    return this.#results.size;
  }

  async keep(tool: string, text: string, session: ResultOwner): Promise<KeptResult> {
    this.#expire();
    const handle = `res_${randomBytes(6).toString("hex")}`;
    const owner = session.id;
    const ttlMs = this.#ttlFor?.(session.principal) ?? this.#ttlMs;
    const entry = await this.#store.write(handle, text, { ttlMs, owner });
    const kept: KeptResult = {
      handle,
      tool,
      bytes: entry.bytes,
      lines: countLines(text),
      createdAt: entry.createdAt,
      expiresAt: entry.expiresAt ?? entry.createdAt + ttlMs,
      owner,
      principal: session.principal,
    };
    // In a shared store another instance may be asked for it: its facts go beside the text, owned and expiring alike.
    if (this.#store.shared) await this.#store.write(metaKey(handle), JSON.stringify(kept), { ttlMs, owner });
    this.#results.set(handle, kept);
    this.#bytes += kept.bytes;
    for (const [old, result] of this.#results) {
      if (this.#bytes <= this.#maxBytes || old === handle) break;
      this.#delete(old, result);
    }
    return kept;
  }

  /**
   * The kept result's facts; another session's handle is "not found", exactly like an unknown one, unless the caller
   * is the same principal (`principal`): then it learns which of its sessions kept it, and that only that one reads it.
   */
  async get(handle: string, owner: string, principal?: string): Promise<KeptResult> {
    this.#expire();
    const kept = this.#results.get(handle) ?? (await this.#sharedFacts(handle, owner));
    if (kept && kept.owner !== owner && principal !== undefined && kept.principal === principal) throw new ResultNotFoundError(handle, { keptBy: kept.tool });
    if (!kept || kept.owner !== owner) throw new ResultNotFoundError(handle);
    return kept;
  }

  /** The kept text; the handle is checked first, so it cannot name a file of its own. */
  async read(handle: string, owner: string): Promise<string> {
    const kept = await this.get(handle, owner);
    const text = await this.#store.read(kept.handle, { owner });
    if (text === undefined) throw new ResultNotFoundError(handle);
    return text;
  }

  /**
   * Deletes every result `principal`'s sessions kept (in a shared store, through whichever instance kept it); returns how many.
   * In a shared store a result is counted by the instance whose delete removed it, so instances forgetting at once count it once.
   */
  async forget(principal: string): Promise<number> {
    const mine = [...this.#results].filter(([, kept]) => kept.principal === principal);
    for (const [handle, kept] of mine) this.#drop(handle, kept);
    if (!this.#store.shared) {
      await Promise.all(mine.map(([handle]) => this.#store.delete(handle).catch(() => undefined)));
      return mine.length;
    }
    let forgotten = 0;
    const seen = new Set<string>();
    for (const [handle] of mine) {
      seen.add(handle);
      if (await this.#removeShared(handle)) forgotten++;
    }
    for (const entry of await this.#store.list()) {
      const handle = entry.key.slice(0, -".meta".length);
      if (!entry.key.endsWith(".meta") || seen.has(handle)) continue;
      const text = await this.#store.read(entry.key, entry.owner !== undefined ? { owner: entry.owner } : {});
      if (text === undefined || (JSON.parse(text) as Partial<KeptResult>).principal !== principal) continue;
      if (await this.#removeShared(handle)) forgotten++;
    }
    return forgotten;
  }

  /** Forgets every result; a shared store's entries stay for the other instances and expire on their own. */
  async clear(): Promise<void> {
    this.#results.clear();
    this.#bytes = 0;
    if (!this.#store.shared) await this.#store.clear();
  }

  /** A result another instance kept, from its facts in the shared store (the store checks the owner). */
  async #sharedFacts(handle: string, owner: string): Promise<KeptResult | undefined> {
    if (!this.#store.shared || !KEPT_HANDLE_PATTERN.test(handle)) return undefined;
    const text = await this.#store.read(metaKey(handle), { owner });
    if (text === undefined) return undefined;
    const kept = JSON.parse(text) as KeptResult;
    return kept.handle === handle && kept.owner === owner && kept.expiresAt > this.#now() ? kept : undefined;
  }

  #expire(): void {
    const now = this.#now();
    for (const [handle, kept] of this.#results) if (kept.expiresAt <= now) this.#delete(handle, kept);
  }

  /** Deletes a kept result's text and facts from a shared store; true when this call removed its facts. */
  async #removeShared(handle: string): Promise<boolean> {
    await this.#store.delete(handle);
    if (this.#store.remove) return await this.#store.remove(metaKey(handle));
    await this.#store.delete(metaKey(handle));
    return true;
  }

  #drop(handle: string, kept: KeptResult): void {
    this.#results.delete(handle);
    this.#bytes -= kept.bytes;
  }

  #delete(handle: string, kept: KeptResult): void {
    this.#drop(handle, kept);
    void this.#store.delete(handle).catch(() => undefined);
    if (this.#store.shared) void this.#store.delete(metaKey(handle)).catch(() => undefined);
  }
}

/** Where a shared store keeps a result's facts. */
function metaKey(handle: string): string {
  return `${handle}.meta`;
}

function countLines(text: string): number {
  if (!text) return 0;
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  return text.endsWith("\n") ? lines - 1 : lines;
}
