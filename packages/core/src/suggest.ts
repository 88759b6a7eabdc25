/**
 * Edit distance with adjacent transpositions counted as one edit ("disabeld" is one from "disabled"),
 * stopping early once every path exceeds `max`. Linear memory; callers bound the lengths they pass.
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, beforePrevious[j - 2]! + 1);
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** The names closest in spelling to a mistyped one (within a quarter of its length, at least 2 edits), closest first. */
export function closestNames(requested: string, names: Iterable<string>, limit = 3): string[] {
  const max = Math.max(2, Math.floor(requested.length / 4));
  const scored: Array<[string, number]> = [];
  for (const name of names) {
    const distance = editDistance(requested.toLowerCase(), name.toLowerCase(), max);
    if (distance <= max) scored.push([name, distance]);
  }
  return scored
    .sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]))
    .slice(0, limit)
    .map(([name]) => name);
}

/** The key meant by a near miss (`comand` for `command`): edit distance at most 2 (less for short keys), or one a prefix of the other. */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const distance = other === lower ? 0 : other.startsWith(lower) || lower.startsWith(other) ? 1 : editDistance(lower, other, 2);
    if (distance <= Math.min(2, Math.max(1, Math.floor(candidate.length / 3))) && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}
