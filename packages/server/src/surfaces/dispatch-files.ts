import { LOCAL_PRINCIPAL } from "@codemux/core";
import { ConfigError, SettingsReader, isSettingsObject } from "@codemux/pool";
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, realpath, rm } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { BadRequestError } from "../errors";
import { openBeneath } from "./beneath";

/** The config's `dispatch` block: folders dispatch's `call` may read arguments from and write results to. */
export interface DispatchFiles {
  /** Folders `argumentsFile` may name files under (absolute). Over HTTP each principal reads only its own subfolder. */
  allowArgumentFiles: string[];
  /** Where `resultToFile` writes (absolute); without it the result is kept as a handle. Each principal over HTTP writes to its own subfolder. */
  resultFileDir?: string;
}

/** An argument file is read whole and parsed: 10 MiB at most. */
export const MAX_ARGUMENT_FILE_BYTES = 10 * 1024 * 1024;
const MAX_FOLDERS = 50;

/** The config's `dispatch` block, checked (paths resolved against the config's folder), or undefined. */
export function dispatchFilesOf(config: unknown, file: string, configDir: string): DispatchFiles | undefined {
  const value = isSettingsObject(config) ? config.dispatch : undefined;
  if (value === undefined) return undefined;
  const read = new SettingsReader((where, what) => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${what}.`, { file });
  });
  const { allowArgumentFiles, resultFileDir } = read.object(value, "dispatch", ["allowArgumentFiles", "resultFileDir"]);
  const folders = allowArgumentFiles === undefined ? [] : read.strings(allowArgumentFiles, "dispatch.allowArgumentFiles", MAX_FOLDERS);
  if (resultFileDir !== undefined && (typeof resultFileDir !== "string" || resultFileDir === "")) read.fail("dispatch.resultFileDir", "expected a folder");
  return {
    allowArgumentFiles: folders.map((folder) => resolve(configDir, folder)),
    ...(resultFileDir !== undefined ? { resultFileDir: resolve(configDir, resultFileDir as string) } : {}),
  };
}

/** A principal's own part of a configured folder: the folder itself for the owner over stdio, its subfolder for anyone else. */
export function principalPart(folder: string, principal: string): string {
  return principal === LOCAL_PRINCIPAL
    ? folder
    : join(
        folder,
        encodeURIComponent(principal).replace(/^\.+$/, (dots) => "%2E".repeat(dots.length)),
      );
}

/** A principal's own part of a configured folder, as the folder and the names below it: none for the owner over stdio, its subfolder for anyone else. */
function partsOf(folder: string, principal: string): { folder: string; below: string[] } {
  const own = principalPart(folder, principal);
  return { folder, below: own === folder ? [] : [own.slice(folder.length + 1)] };
}

/** The folders `principal` may read argument files from: its part of each allowed folder, and of the result folder (files codemux wrote for it). */
function readableFolders(files: DispatchFiles | undefined, principal: string): Array<{ folder: string; below: string[] }> {
  if (!files) return [];
  return [...files.allowArgumentFiles, ...(files.resultFileDir ? [files.resultFileDir] : [])].map((folder) => partsOf(folder, principal));
}

/** The names of `path` below `folder` (lexically, `..` resolved), or undefined when it is not strictly inside. */
function namesBelow(folder: string, path: string): string[] | undefined {
  const rel = relative(folder, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep) : undefined;
}

/** The configured folder `path` is under (as written, or as its real path: the operator's own links, such as /tmp on macOS, are fine) and the names below it. */
async function locate(folders: Array<{ folder: string; below: string[] }>, path: string): Promise<{ folder: string; names: string[] } | undefined> {
  const resolved = resolve(path);
  for (const { folder, below } of folders) {
    for (const spelling of new Set([folder, await realpath(folder).catch(() => folder)])) {
      const names = namesBelow(spelling, resolved);
      if (names && below.every((name, index) => names[index] === name) && names.length > below.length) return { folder: spelling, names };
    }
  }
  return undefined;
}

/**
 * The JSON object an argument file holds. Only a file under one of the principal's folders is read, opened
 * without following a symbolic link anywhere below the configured folder (`openBeneath`), and checked once open:
 * a regular file of at most 10 MiB. Anything else gets the same refusal whether it exists or not, so the answer
 * tells nothing about the rest of the disk.
 */
export async function readArgumentFile(files: DispatchFiles | undefined, principal: string, path: string): Promise<Record<string, unknown>> {
  const folders = readableFolders(files, principal);
  const refuse = (): never => {
    throw new BadRequestError(
      folders.length === 0
        ? `argumentsFile may only name a result codemux kept (res_…) here; got "${path.slice(0, 200)}". To read files, list their folder in the config's dispatch.allowArgumentFiles.`
        : `argumentsFile may only name a result codemux kept (res_…) or a file under ${folders.map((f) => join(f.folder, ...f.below)).join(", ")}; got "${path.slice(0, 200)}".`,
    );
  };
  const where = isAbsolute(path) ? await locate(folders, path) : undefined;
  if (!where) return refuse();
  const handle = await openBeneath(where.folder, where.names, { read: true }).catch(refuse);
  let text: string;
  try {
    // Checked on the file opened, never on a path that may point elsewhere by now.
    const facts = await handle.stat();
    if (!facts.isFile()) throw new BadRequestError(`argumentsFile "${path.slice(0, 200)}" is not a file.`);
    if (facts.size > MAX_ARGUMENT_FILE_BYTES)
      throw new BadRequestError(`argumentsFile "${path.slice(0, 200)}" is ${facts.size} bytes; an argument file may be at most ${MAX_ARGUMENT_FILE_BYTES}.`);
    // At most the bound: the file may grow between fstat and read.
    const buffer = Buffer.alloc(Math.min(facts.size, MAX_ARGUMENT_FILE_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    text = buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestError(`argumentsFile "${path.slice(0, 200)}" is not JSON; it must hold the call's arguments as a JSON object.`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new BadRequestError(
      `Arguments must be a JSON object; argumentsFile "${path.slice(0, 200)}" holds ${Array.isArray(value) ? "a list" : value === null ? "null" : typeof value}.`,
    );
  return value as Record<string, unknown>;
}

/**
 * Writes a result for `principal` under the result folder (0600 in a 0700 folder); returns its path, or undefined
 * without a result folder. The principal's folder and the file are made without following links: a link planted
 * at either refuses the write, never sends it outside the result folder.
 */
export async function writeResultFile(
  files: DispatchFiles | undefined,
  result: { principal: string; tool: string; text: string },
): Promise<string | undefined> {
  const { principal, tool, text } = result;
  if (!files?.resultFileDir) return undefined;
  const { folder, below } = partsOf(files.resultFileDir, principal);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const json = text.trimStart().startsWith("{") || text.trimStart().startsWith("[");
  const name = `${tool.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100)}-${Date.now()}-${randomBytes(3).toString("hex")}.${json ? "json" : "txt"}`;
  const handle = await openBeneath(folder, [...below, name], { create: 0o600, makeFolders: below.length }).catch((error: NodeJS.ErrnoException) => {
    const at = join(folder, ...below);
    if (error.code === "ENOENT") throw new BadRequestError(`codemux did not write the result: ${at} was moved or removed while it wrote there; call again.`);
    if (error.code !== "ELOOP" && error.code !== "ENOTDIR") throw error;
    throw new BadRequestError(
      `codemux did not write the result: ${at} is not a folder codemux made (a symbolic link or a file is there). Remove it, then call again.`,
    );
  });
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  return join(folder, ...below, name);
}

/**
 * Deletes the files `resultToFile` wrote for `principal` (`codemux forget`): its subfolder of the result
 * folder, or for the owner over stdio the files at the folder's top (the others' subfolders stay). Nothing
 * is followed: a link planted where the subfolder should be is removed, never what it points to. Returns
 * how many files went.
 */
export async function forgetResultFiles(files: DispatchFiles | undefined, principal: string): Promise<number> {
  if (!files?.resultFileDir) return 0;
  if (principal === LOCAL_PRINCIPAL) {
    const top = await readdir(files.resultFileDir, { withFileTypes: true }).catch(() => []);
    const own = top.filter((entry) => entry.isFile());
    for (const entry of own) await rm(join(files.resultFileDir, entry.name), { force: true });
    return own.length;
  }
  const folder = principalPart(files.resultFileDir, principal);
  const facts = await lstat(folder).catch(() => undefined);
  if (facts === undefined) return 0;
  // Recursive listing does not follow links below the folder; the folder itself is checked above.
  const count = facts.isDirectory() ? (await readdir(folder, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).length : 0;
  await rm(folder, { recursive: true, force: true });
  return count;
}
