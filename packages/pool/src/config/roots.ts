import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Roots one server entry may list, at most. */
export const MAX_ROOTS = 32;

/**
 * One entry of a server's `roots` as the `file://` URI a server is told: a `file://` URI (checked and
 * normalized), or a folder path, relative ones against `base` (the config file's folder).
 */
export function rootUri(value: string, base: string | undefined): { uri: string } | { problem: string } {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) && !/^[A-Za-z]:[\\/]/.test(value)) {
    if (!/^file:\/\//i.test(value)) return { problem: "must be a folder path or a file:// URI" };
    try {
      return { uri: pathToFileURL(fileURLToPath(value)).href };
    } catch {
      return { problem: "is not a file:// URI of a local folder" };
    }
  }
  if (isAbsolute(value)) return { uri: pathToFileURL(value).href };
  if (base === undefined) return { problem: "is a relative path and there is no config folder to resolve it against; give an absolute path" };
  return { uri: pathToFileURL(resolve(base, value)).href };
}
