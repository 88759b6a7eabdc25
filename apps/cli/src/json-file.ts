import { parseConfig } from "@codemux/pool";
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
  const { text: plain, comments } = stripJsonComments(text.replace(/^\uFEFF/, ""));
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
  return { data: data as Json, text, mode, comments };
}

/** Blanks `//` and `/* *\/` comments and drops trailing commas outside strings (VS Code's files are JSONC); positions are kept; says whether there were comments. */
export function stripJsonComments(text: string): { text: string; comments: boolean } {
  let out = "";
  let comments = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      comments = true;
      const end = text.indexOf("\n", i);
      const stop = end < 0 ? text.length : end;
      out += " ".repeat(stop - i);
      i = stop;
    } else if (c === "/" && text[i + 1] === "*") {
      comments = true;
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
  return { text: out, comments };
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
