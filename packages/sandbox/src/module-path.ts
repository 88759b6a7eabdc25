import { posix } from "node:path";

export type ResolvedSpecifier = { ok: true; path: string } | { ok: false; reason: string };

const URL_SCHEME = /^[a-z][a-z\d+.-]*:/i;

/**
 * Resolves an import specifier to a virtual module path. Relative specifiers resolve against the
 * importer with posix rules and may not climb above the root; absolute paths and URLs
 * (`node:`, `file:`, `https:`) are refused outright.
 */
export function resolveSpecifier(specifier: string, importer: string): ResolvedSpecifier {
  if (specifier === "" || specifier.includes("\0")) return { ok: false, reason: "it is not a valid module name" };
  if (URL_SCHEME.test(specifier)) return { ok: false, reason: "URL and built-in module imports are not available" };
  if (specifier.startsWith("/")) return { ok: false, reason: "absolute paths are not available" };
  const relative = specifier === "." || specifier === ".." || specifier.startsWith("./") || specifier.startsWith("../");
  const path = posix.normalize(relative ? posix.join(posix.dirname(importer), specifier) : specifier);
  if (path === ".." || path.startsWith("../")) return { ok: false, reason: "it climbs above the module root" };
  return { ok: true, path };
}
