/**
 * Matches `server__tool` names against globs (`*` any run of characters, `?` one), e.g.
 * `github__delete_*`, `fs__*`, `*__write_*`. A glob without `__` or `*` also matches a whole server,
 * unless `wholeServer` is false (globs over other names, such as principals).
 */
export function globMatcher(globs: readonly string[] | undefined, options: { wholeServer?: boolean } = {}): (name: string) => boolean {
  if (!globs || globs.length === 0) return () => false;
  const wholeServer = options.wholeServer ?? true;
  const patterns = globs.map((glob) => {
    const source = glob
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    return new RegExp(!wholeServer || glob.includes("__") || glob.includes("*") ? `^${source}$` : `^${source}(?:__.*)?$`);
  });
  return (name) => patterns.some((p) => p.test(name));
}
