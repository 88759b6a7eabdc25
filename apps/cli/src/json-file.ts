import { parseJsonc } from "@codemux/pool";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { UsageError } from "./errors";

export type Json = Record<string, unknown>;

/** A client's or codemux's config file as read: its data, its text (undefined when missing), its mode, and whether it had comments. */
export interface JsonFile {
  data: Json;
  text: string | undefined;
  mode: number | undefined;
  comments: boolean;
}

/** Reads a JSON (or VS Code's JSONC) file; a syntax error names the file, line and column as the config loader does. */
export async function readJsonFile(file: string, { missingOk = false } = {}): Promise<JsonFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && missingOk) return { data: {}, text: undefined, mode: undefined, comments: false };
    throw new UsageError(`Cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
  if (text.length > 16 * 1024 * 1024) throw new UsageError(`${file} is over 16 MB; it does not look like an MCP client config.`);
  const mode = (await stat(file)).mode & 0o777;
  let data: unknown;
  let comments: boolean;
  try {
    ({ value: data, comments } = parseJsonc(text, file, { empty: {} }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw new UsageError(`${file}: expected a JSON object at the top level.`);
  return { data: data as Json, text, mode, comments };
}

/** Writes through a temporary file and a rename, so a crash never leaves half a config. */
export async function writeAtomically(file: string, text: string, mode?: number): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, text, { mode: mode ?? 0o644, flag: "wx" });
    // The umask narrows the mode given at creation; the file gets exactly the mode asked for.
    if (mode !== undefined) await chmod(temporary, mode);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
