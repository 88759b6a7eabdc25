/**
 * Matches `server__tool` names against globs (`*` any run of characters, `?` one), e.g.
 * `github__delete_*`, `fs__*`, `*__write_*`. A glob without `__` also matches a whole server.
 */
export function globMatcher(globs: readonly string[] | undefined): (name: string) => boolean {
  if (!globs || globs.length === 0) return () => false;
  const patterns = globs.map((glob) => {
    const source = glob
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    return new RegExp(glob.includes("__") || glob.includes("*") ? `^${source}$` : `^${source}(?:__.*)?$`);
  });
  return (name) => patterns.some((p) => p.test(name));
}
