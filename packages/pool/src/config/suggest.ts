/** The candidate closest to `key` (case-insensitive edit distance at most 2, or a prefix match), if any. */
export function closestKey(key: string, candidates: string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const distance = other === lower ? 0 : other.startsWith(lower) || lower.startsWith(other) ? 1 : editDistance(lower, other);
    if (distance <= Math.min(2, Math.max(1, Math.floor(candidate.length / 3))) && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/** Levenshtein distance with adjacent transpositions counted as one edit ("disabeld"). */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
