import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/**
 * Linux names each open descriptor `/proc/self/fd/N`; resolving `/proc/self/fd/N/name` starts from the folder N is open on,
 * whatever its path says now: an `openat(N, name)` that Node has no call for.
 */
const FD_DIR = existsSync("/proc/self/fd") ? "/proc/self/fd" : undefined;

/** A name inside a folder, never `.`, `..`, empty or with a separator: a walk goes down one real folder at a time. */
function checkedPart(part: string): string {
  if (part === "" || part === "." || part === ".." || part.includes("/") || part.includes("\0")) throw linkError(part, "is not a plain name");
  return part;
}

function linkError(part: string, what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`"${part.slice(0, 100)}" ${what}`), { code: "ELOOP" });
}

/**
 * What to open at the end of a walk: a file to read (any kind; the caller checks it), or a new file to write (never an
 * existing one) with its mode, making the first `makeFolders` folders of the walk (0700) when they are missing.
 */
export type Beneath = { read: true } | { create: number; makeFolders?: number };

/**
 * Opens `parts` under the folder `root` without following a symbolic link anywhere below `root` (`root` itself is
 * trusted: the operator's folder). Each folder is opened with O_NOFOLLOW | O_DIRECTORY and the next name is looked up
 * in the folder opened, not by path, so a link swapped in at any moment makes the walk fail (ELOOP or ENOTDIR) instead
 * of leaving the folder. Creating uses O_CREAT | O_EXCL | O_NOFOLLOW in the last folder opened. Folders it makes
 * (`makeFolders`) are made the same way: mkdir never follows a link at the name it creates.
 */
export async function openBeneath(root: string, parts: readonly string[], what: Beneath): Promise<FileHandle> {
  const names = parts.map(checkedPart);
  const last = names.pop();
  if (last === undefined) throw linkError(root, "names no file");
  const mkdirs = "create" in what ? (what.makeFolders ?? 0) : 0;
  if (FD_DIR === undefined) return openByPath(root, [...names, last], what);
  let folder = await open(root, O_RDONLY | O_DIRECTORY);
  try {
    for (const [index, name] of names.entries()) {
      const at = join(FD_DIR, String(folder.fd), name);
      if (index < mkdirs) await mkdir(at, { mode: 0o700 }).catch(existing);
      const next = await open(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      await folder.close();
      folder = next;
    }
    return await open(join(FD_DIR, String(folder.fd), last), flagsOf(what), "create" in what ? what.create : undefined);
  } finally {
    await folder.close();
  }
}

function flagsOf(what: Beneath): number {
  // O_NONBLOCK: opening a FIFO someone planted returns at once (and fails the caller's isFile check) instead of hanging.
  return "create" in what ? O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW : O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
}

function existing(error: NodeJS.ErrnoException): void {
  if (error.code !== "EEXIST") throw error;
}

/**
 * Where there is no /proc/self/fd (macOS): each folder below `root` is checked to be no link, the last name is opened
 * with O_NOFOLLOW, and the opened file must be the one now at that path (device and inode). A link swapped into a
 * folder between the checks can still be followed there: only Linux gets the walk above.
 */
async function openByPath(root: string, parts: string[], what: Beneath): Promise<FileHandle> {
  const mkdirs = "create" in what ? (what.makeFolders ?? 0) : 0;
  let path = root;
  for (const [index, name] of parts.slice(0, -1).entries()) {
    path = join(path, name);
    if (index < mkdirs) await mkdir(path, { mode: 0o700 }).catch(existing);
    const facts = await lstat(path);
    if (!facts.isDirectory()) throw linkError(name, "is not a folder");
  }
  path = join(path, parts[parts.length - 1] as string);
  const handle = await open(path, flagsOf(what), "create" in what ? what.create : undefined);
  const [opened, there] = await Promise.all([handle.stat(), lstat(path).catch(() => undefined)]);
  if (there === undefined || opened.dev !== there.dev || opened.ino !== there.ino) {
    await handle.close();
    throw linkError(path, "changed while it was opened");
  }
  return handle;
}
