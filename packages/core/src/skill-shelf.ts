/** One principal's saved skill as every instance sees it: the library's record of it (JSON text). */
export interface ShelvedSkill {
  principal: string;
  name: string;
  record: string;
}

/** What `put` did: saved, or refused because another writer changed the skill first or the principal has `max` skills. */
export type ShelfPut = "saved" | "changed" | "full";

/**
 * Saved skills every instance of a deployment reads and changes (Redis). Each instance keeps its own
 * copy in memory (imports stay synchronous) and reads a principal's skills again when told they changed.
 */
export interface SkillShelf {
  /** Every principal's skills (bounded): what an instance loads before it serves. */
  all(): Promise<ShelvedSkill[]>;
  /** One principal's skills, by name. */
  of(principal: string): Promise<Map<string, string>>;
  /**
   * Saves `skill.record` as the principal's skill `name`, only if it still holds `expected` (undefined: absent)
   * and, when new, the principal has fewer than `max`: two instances saving one name at once never lose one silently.
   */
  put(skill: ShelvedSkill, options: { expected: string | undefined; max: number }): Promise<ShelfPut>;
  /** Deletes one skill; false when it was not there. */
  delete(principal: string, name: string): Promise<boolean>;
  /** Deletes every skill of `principal`; returns how many there were. */
  forget(principal: string): Promise<number>;
  /** Calls `changed(principal)` when any instance changed that principal's skills, and `changed(undefined)` when changes may have been missed (a reconnect). */
  onChange(changed: (principal: string | undefined) => void): void;
  close(): Promise<void>;
}
