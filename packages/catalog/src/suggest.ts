/** Levenshtein distance, stopping early once it exceeds `max`. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** The names closest in spelling to a mistyped one (a quarter of its length, at least 2 edits). */
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
