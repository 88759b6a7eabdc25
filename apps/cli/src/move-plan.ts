import { SERVER_NAME_PATTERN, lineDiff } from "@codemux/core";
import { isCodemuxCommand, parseConfig, redactConfig } from "@codemux/pool";
import { homeConfigFile } from "@codemux/server";
import type { Command } from "commander";
import { resolve } from "node:path";
import type { GlobalOptions } from "./context";
import { UsageError } from "./errors";
import { type Json, type JsonFile, writeAtomically } from "./json-file";

/** The key a config lists its servers under: VS Code's `servers`, else `mcpServers`. */
export function serversKeyOf(data: Json): "mcpServers" | "servers" {
  return "servers" in data && !("mcpServers" in data) ? "servers" : "mcpServers";
}

/** An entry that starts codemux, including Windows' `cmd /c npx -y codemux ...` with the command split over args. */
export function isCodemuxEntry(entry: Json): boolean {
  if (typeof entry.command !== "string") return false;
  const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
  if (isCodemuxCommand(entry.command, args)) return true;
  const shell = /^cmd(?:\.exe)?$/i.test(entry.command.replace(/^.*[\\/]/, ""));
  return shell && /^\/[ck]$/i.test(args[0] ?? "") && args.length > 1 && isCodemuxCommand(args[1]!, args.slice(2));
}

export interface MovePlan {
  /** The servers added to codemux's config, by their name there. */
  moved: Array<{ from: string; to: string }>;
  /** Entries that are codemux itself: dropped, never listed inside codemux's config. */
  self: string[];
  /** Entries already in codemux's config, identical. */
  same: string[];
  /** Entries left where they were, with why. */
  kept: Array<{ name: string; why: string }>;
  /** codemux's config after the move, as it is written. */
  after: string;
  /** How many servers codemux's config lists after the move. */
  servers: number;
}

/** Plans moving `entries` into codemux's config (`codemux` holds its current data, possibly empty). */
export function planMove(options: { entries: Json; codemux: Pick<JsonFile, "data">; suffix: string }): MovePlan {
  const { entries, codemux } = options;
  const key = serversKeyOf(codemux.data);
  const existing = { ...((codemux.data[key] as Json | undefined) ?? {}) };
  const plan: MovePlan = { moved: [], self: [], same: [], kept: [], after: "", servers: 0 };
  for (const [name, entry] of Object.entries(entries)) {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      plan.kept.push({ name, why: "it is not an object" });
      continue;
    }
    const e = entry as Json;
    if (isCodemuxEntry(e)) {
      plan.self.push(name);
      continue;
    }
    // VS Code's ${input:...} prompts the user; codemux cannot, and refuses the whole config with one.
    if (/\$\{(?:input|command|config):/.test(JSON.stringify(e))) {
      plan.kept.push({ name, why: "it uses ${input:...} (or ${command:}/${config:}) variables, which only the client can fill in" });
      continue;
    }
    if (!SERVER_NAME_PATTERN.test(name)) {
      plan.kept.push({ name, why: 'its name is not a codemux server name (letters, digits, "-", single "_")' });
      continue;
    }
    if (name in existing) {
      if (JSON.stringify(existing[name]) === JSON.stringify(e)) {
        plan.same.push(name);
        continue;
      }
      const renamed = `${name}-${options.suffix}`;
      if (renamed in existing && JSON.stringify(existing[renamed]) === JSON.stringify(e)) {
        plan.same.push(renamed);
        continue;
      }
      if (renamed in existing || !SERVER_NAME_PATTERN.test(renamed)) {
        plan.kept.push({ name, why: `codemux's config already has a different "${name}" (and "${renamed}")` });
        continue;
      }
      existing[renamed] = e;
      plan.moved.push({ from: name, to: renamed });
      continue;
    }
    existing[name] = e;
    plan.moved.push({ from: name, to: name });
  }
  plan.after = `${JSON.stringify({ ...codemux.data, [key]: existing }, null, 2)}\n`;
  plan.servers = Object.keys(existing).length;
  return plan;
}

/** The config `install` and `import` write: `--config`, else `<codemux home>/codemux.json` (a step of the config lookup). */
export function codemuxConfigPath(command: Command): string {
  const opts = command.optsWithGlobals<GlobalOptions>();
  return resolve(opts.config ?? homeConfigFile());
}

/** Checks the config codemux will read parses, before anything is written. */
export function checkCodemuxConfig(file: string, text: string): void {
  try {
    parseConfig(text, { file, env: {} });
  } catch (error) {
    throw new UsageError(`The merged config would not load, so nothing was written: ${(error as Error).message}`);
  }
}

/** What the plan does, one sentence per kind; `verb` is "Moved" for install, "Copied" for import. */
export function describePlan(plan: MovePlan, codemuxConfig: string, verb: "Moved" | "Copied"): string {
  const lines: string[] = [];
  if (plan.moved.length) lines.push(`${verb} into ${codemuxConfig}: ${plan.moved.map((m) => (m.from === m.to ? m.to : `${m.from} (as ${m.to})`)).join(", ")}.`);
  if (plan.same.length) lines.push(`Already in codemux's config: ${plan.same.join(", ")}.`);
  if (plan.self.length) lines.push(`Skipped (codemux itself): ${plan.self.join(", ")}.`);
  for (const k of plan.kept) lines.push(`Left ${k.name} where it was: ${k.why}.`);
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/** The diff of a config file as shown to the user: env and header values and other secrets masked, as everywhere codemux prints. */
export function maskedDiff(file: string, before: Json | undefined, after: Json): string {
  const show = (data: Json) => `${JSON.stringify(redactConfig(data), null, 2)}\n`;
  return lineDiff(file, before === undefined ? undefined : show(before), show(after));
}

/**
 * Writes codemux's config. A new one is owner-only, and one that others can read is tightened to 0600,
 * since the servers moved into it may carry API keys in env and headers; returns the sentence that says so.
 */
export async function writeCodemuxConfig(file: string, text: string, current: JsonFile): Promise<string> {
  const readableByOthers = current.mode !== undefined && (current.mode & 0o077) !== 0;
  await writeAtomically(file, text, readableByOthers || current.mode === undefined ? 0o600 : current.mode);
  if (!readableByOthers) return "";
  return `${file} was readable by other users (mode ${(current.mode as number).toString(8).padStart(4, "0")}); it is now 0600, as the servers in it may carry API keys.\n`;
}
