import { posix } from "node:path";
import { MAX_SPECIFIER_LENGTH } from "./defaults.js";

export type ResolvedSpecifier = { ok: true; path: string } | { ok: false; reason: string };

const URL_SCHEME = /^[a-z][a-z\d+.-]*:/i;
/** C0 controls, DEL and the line separators: no module name has them, and they garble messages. */
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/;

/**
 * Resolves an import specifier to a virtual module path. Relative specifiers resolve against the
 * importer with posix rules and may not climb above the root; absolute paths and URLs
 * (`node:`, `file:`, `https:`) are refused outright.
 */
export function resolveSpecifier(specifier: string, importer: string): ResolvedSpecifier {
  if (specifier === "") return { ok: false, reason: "it is not a valid module name" };
  if (specifier.length > MAX_SPECIFIER_LENGTH) return { ok: false, reason: `it is longer than ${MAX_SPECIFIER_LENGTH} characters` };
  if (CONTROL.test(specifier)) return { ok: false, reason: "it contains control characters, which no module name has" };
  if (URL_SCHEME.test(specifier)) return { ok: false, reason: "URL and built-in module imports are not available" };
  if (specifier.startsWith("/")) return { ok: false, reason: "absolute paths are not available" };
  const relative = specifier === "." || specifier === ".." || specifier.startsWith("./") || specifier.startsWith("../");
  const path = posix.normalize(relative ? posix.join(posix.dirname(importer), specifier) : specifier);
  if (path === ".." || path.startsWith("../")) return { ok: false, reason: "it climbs above the module root" };
  return { ok: true, path };
}

/** A specifier for a message: quoted with its control characters escaped, and cut when long. */
export function showSpecifier(specifier: string): string {
  const shown = JSON.stringify(specifier.length > 200 ? `${specifier.slice(0, 200)}…` : specifier);
  return shown.replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}
