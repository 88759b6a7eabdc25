import { closestNames } from "@codemux/core";

/** Throws with the path of the field that is wrong and why. */
export type SettingsFail = (where: string, message: string) => never;

/**
 * Checks the sections of a config file that the pool does not read (`http`, `policies`), one value at a
 * time; `fail` throws with the field's path (a `ConfigError` naming the file).
 */
export class SettingsReader {
  constructor(readonly fail: SettingsFail) {}

  /** An object whose keys are all `known` (any key when absent); an unknown key names the nearest known one. */
  object(value: unknown, where: string, known?: readonly string[]): Record<string, unknown> {
    if (!isSettingsObject(value)) return this.fail(where, "expected an object");
    for (const key of Object.keys(value)) {
      if (!known || known.includes(key)) continue;
      const close = closestNames(key, known, 1)[0];
      this.fail(`${where}.${key}`, `unknown setting${close ? ` (did you mean "${close}"?)` : ""}; ${where} takes ${known.join(", ")}`);
    }
    return value;
  }

  count(value: unknown, where: string): number {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
      this.fail(where, `expected a whole number of at least 1 (got ${JSON.stringify(value)?.slice(0, 40)})`);
    return value as number;
  }

  /** A list of non-empty strings, at most `max` of them. */
  strings(value: unknown, where: string, max = 1000): string[] {
    if (!Array.isArray(value) || !value.every((entry) => typeof entry === "string" && entry.length > 0 && entry.length <= 300))
      this.fail(where, 'expected a list of non-empty strings, e.g. ["fs__*"]');
    const list = value as string[];
    if (list.length > max) this.fail(where, `expected at most ${max} entries (got ${list.length})`);
    return list;
  }

  boolean(value: unknown, where: string): boolean {
    if (typeof value !== "boolean") this.fail(where, `expected true or false (got ${JSON.stringify(value)?.slice(0, 40)})`);
    return value as boolean;
  }
}

export function isSettingsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
