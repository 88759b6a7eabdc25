import { isCodemuxCommand, parseConfig, SERVER_NAME_PATTERN } from "@codemux/pool";
import { homeConfigFile } from "@codemux/server";
import type { Command } from "commander";
import { randomBytes } from "node:crypto";
import { copyFile, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import type { GlobalOptions, RunContext } from "../context";
import { UsageError } from "../errors";

export const CLIENTS = ["claude-desktop", "cursor", "claude-code", "vscode"] as const;
export type ClientName = (typeof CLIENTS)[number];

type Json = Record<string, unknown>;

/** Where each client keeps its user-level MCP servers on this platform, and under which key. */
export function clientConfigPath(client: ClientName, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const home = env.HOME || env.USERPROFILE || homedir();
  const appData =
    platform === "win32"
      ? env.APPDATA || join(home, "AppData", "Roaming")
      : platform === "darwin"
        ? join(home, "Library", "Application Support")
        : env.XDG_CONFIG_HOME || join(home, ".config");
  switch (client) {
    case "claude-desktop":
      return join(appData, "Claude", "claude_desktop_config.json");
    case "cursor":
      return join(home, ".cursor", "mcp.json");
    case "claude-code":
      // User scope of Claude Code: the top-level mcpServers of ~/.claude.json (what `claude mcp add -s user` writes).
      return join(home, ".claude.json");
    case "vscode":
      return join(appData, "Code", "User", "mcp.json");
  }
}

function serversKey(client: ClientName | undefined, data: Json): "mcpServers" | "servers" {
  if (client === "vscode") return "servers";
  if (client) return "mcpServers";
  return "servers" in data && !("mcpServers" in data) ? "servers" : "mcpServers";
}

/** The one entry codemux puts in a client's config. */
export function codemuxEntry(client: ClientName, codemuxConfig: string): Json {
  return { ...(client === "vscode" ? { type: "stdio" } : {}), command: "npx", args: ["-y", "codemux", "--config", codemuxConfig] };
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
  /** codemux's config before and after. */
  before: string | undefined;
  after: string;
}

/** Reads a JSON (or VS Code's JSONC) file; a syntax error names the file, line and column as the config loader does. */
export async function readJsonFile(file: string, { missingOk = false } = {}): Promise<{ data: Json; text: string | undefined; mode: number | undefined }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && missingOk) return { data: {}, text: undefined, mode: undefined };
    throw new UsageError(`Cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
  if (text.length > 16 * 1024 * 1024) throw new UsageError(`${file} is over 16 MB; it does not look like an MCP client config.`);
  const mode = (await stat(file)).mode & 0o777;
  const plain = stripJsonComments(text.replace(/^\uFEFF/, ""));
  let data: unknown;
  try {
    data = plain.trim() === "" ? {} : JSON.parse(plain);
  } catch {
    // parseConfig reports JSON syntax errors with the file, line and column; the blanked comments keep positions.
    try {
      parseConfig(plain, { file });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    throw new UsageError(`${file} is not valid JSON.`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw new UsageError(`${file}: expected a JSON object at the top level.`);
  return { data: data as Json, text, mode };
}

/** Blanks `//` and `/* *\/` comments and drops trailing commas outside strings (VS Code's files are JSONC); positions are kept. */
export function stripJsonComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      const stop = end < 0 ? text.length : end;
      out += " ".repeat(stop - i);
      i = stop;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === ",") {
      const rest = /^[\s]*(?:\/\/[^\n]*\n[\s]*|\/\*[\s\S]*?\*\/[\s]*)*[}\]]/.exec(text.slice(i + 1, i + 1 + 4096));
      out += rest ? " " : ",";
      i += 1;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

/** Plans moving `entries` into codemux's config (`codemuxConfig` holds its current data, possibly empty). */
export function planMove(options: { entries: Json; source: string; codemux: { data: Json; text: string | undefined }; suffix: string }): MovePlan {
  const { entries, codemux } = options;
  const key = serversKey(undefined, codemux.data);
  const existing = { ...((codemux.data[key] as Json | undefined) ?? {}) };
  const plan: MovePlan = { moved: [], self: [], same: [], kept: [], before: codemux.text, after: "" };
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
  return plan;
}

/** Line diff of two texts, unified-diff-like (`---`/`+++`, then ` `, `-`, `+` lines; long unchanged runs folded). */
export function lineDiff(file: string, before: string | undefined, after: string): string {
  const a = before === undefined ? [] : before.replace(/\n$/, "").split("\n");
  const b = after.replace(/\n$/, "").split("\n");
  const out = [`--- ${before === undefined ? "/dev/null" : file}`, `+++ ${file}`];
  const lines: string[] = [];
  if (a.length * b.length > 4_000_000) {
    lines.push(...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`));
  } else {
    // Longest common subsequence, bounded above: client configs are small.
    const table = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--)
      for (let j = b.length - 1; j >= 0; j--) table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) {
        lines.push(` ${a[i]}`);
        i++;
        j++;
      } else if (j < b.length && (i === a.length || table[i]![j + 1]! >= table[i + 1]![j]!)) lines.push(`+${b[j++]}`);
      else lines.push(`-${a[i++]}`);
    }
  }
  // Keep 3 lines of context around changes.
  const changed = lines.map((l) => !l.startsWith(" "));
  lines.forEach((line, index) => {
    const near = changed.slice(Math.max(0, index - 3), index + 4).some(Boolean);
    if (near) out.push(line);
    else if (out[out.length - 1] !== " ...") out.push(" ...");
  });
  return `${out.join("\n")}\n`;
}

/** Writes through a temporary file and a rename, so a crash never leaves half a config. */
export async function writeAtomically(file: string, text: string, mode?: number): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, text, { mode: mode ?? 0o644, flag: "wx" });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
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

export function describePlan(plan: MovePlan, codemuxConfig: string): string {
  const lines: string[] = [];
  if (plan.moved.length) lines.push(`Moved into ${codemuxConfig}: ${plan.moved.map((m) => (m.from === m.to ? m.to : `${m.from} (as ${m.to})`)).join(", ")}.`);
  if (plan.same.length) lines.push(`Already in codemux's config: ${plan.same.join(", ")}.`);
  if (plan.self.length) lines.push(`Skipped (codemux itself): ${plan.self.join(", ")}.`);
  for (const k of plan.kept) lines.push(`Left ${k.name} where it was: ${k.why}.`);
  return lines.length ? `${lines.join("\n")}\n` : "";
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

/** `codemux install CLIENT`: moves the client's servers into codemux's config and makes codemux its one entry. */
export function registerInstall(program: Command, context: RunContext): void {
  program
    .command("install")
    .description("set codemux up in a client: move its servers into codemux's config (a backup is kept) and make codemux its one entry")
    .argument("<client>", `one of ${CLIENTS.join(", ")}`)
    .option("--file <path>", "the client's config file (default: where the client keeps it on this platform)")
    .option("--dry-run", "show the changes as a diff, write nothing")
    .option("-y, --yes", "do not ask (needed when not in a terminal)")
    .action(async (client: string, options: { file?: string; dryRun?: boolean; yes?: boolean }, command: Command) => {
      if (!(CLIENTS as readonly string[]).includes(client)) throw new UsageError(`Unknown client "${client}"; use one of ${CLIENTS.join(", ")}.`);
      const name = client as ClientName;
      const file = resolve(options.file ?? clientConfigPath(name));
      const codemuxConfig = codemuxConfigPath(command);
      const original = await readJsonFile(file, { missingOk: true });
      const key = serversKey(name, original.data);
      const entries = original.data[key] ?? {};
      if (typeof entries !== "object" || entries === null || Array.isArray(entries)) throw new UsageError(`${file}: "${key}" is not an object of servers.`);
      const codemux = await readJsonFile(codemuxConfig, { missingOk: true });
      const plan = planMove({ entries: entries as Json, source: file, codemux, suffix: name.replace(/-/g, "") });
      // The client keeps what cannot move, and codemux as its one server entry.
      const kept = Object.fromEntries(plan.kept.map((k) => [k.name, (entries as Json)[k.name]]));
      const clientAfter = `${JSON.stringify({ ...original.data, [key]: { codemux: codemuxEntry(name, codemuxConfig), ...kept } }, null, 2)}\n`;
      const codemuxChanges = plan.after !== codemux.text;
      const clientChanges = original.text === undefined || JSON.stringify(JSON.parse(clientAfter)) !== JSON.stringify(original.data);
      if (codemuxChanges) checkCodemuxConfig(codemuxConfig, plan.after);
      // The client's file diffed as codemux reads it: JSONC comments and the original layout are not kept (the backup keeps them).
      const clientBefore = original.text === undefined ? undefined : `${JSON.stringify(original.data, null, 2)}\n`;
      const layoutNote =
        clientBefore !== undefined && clientBefore !== original.text
          ? `(${file} is rewritten as plain JSON: its comments and layout stay in the backup)\n`
          : "";
      const diff = `${codemuxChanges ? lineDiff(codemuxConfig, plan.before, plan.after) : ""}${clientChanges ? `${lineDiff(file, clientBefore, clientAfter)}${layoutNote}` : ""}`;
      if (!codemuxChanges && !clientChanges) {
        context.stdout.write(`codemux is already the one entry of ${file}; nothing to change.\n`);
        return;
      }
      if (options.dryRun) {
        context.stdout.write(`${diff}${describePlan(plan, codemuxConfig)}(dry run: nothing written)\n`);
        return;
      }
      if (!options.yes) {
        if (!process.stdin.isTTY)
          throw new UsageError(`Not asking without a terminal: run codemux install ${name} --dry-run to see the changes, then again with --yes.`);
        context.stdout.write(diff);
        if (!(await confirm(`Move ${plan.moved.length} server(s) into ${codemuxConfig} and make codemux the one entry of ${file}?`))) {
          context.stdout.write("Nothing changed.\n");
          return;
        }
      }
      // A new codemux config is owner-only: the moved entries may carry API keys in env and headers.
      if (codemuxChanges) await writeAtomically(codemuxConfig, plan.after, codemux.mode ?? 0o600);
      let backup: string | undefined;
      if (original.text !== undefined) {
        backup = `${file}.codemux-backup-${new Date().toISOString().replace(/[:.]/g, "-")}`;
        await copyFile(file, backup);
      }
      if (clientChanges) await writeAtomically(file, clientAfter, original.mode);
      context.stdout.write(
        `${describePlan(plan, codemuxConfig)}${file} now starts codemux (npx -y codemux --config ${codemuxConfig}).${backup ? `\nThe original is kept in ${backup}.` : ""}\nRestart ${name} to use it.\n`,
      );
    });
}
