/** Line diff of two texts, unified-diff-like (`---`/`+++`, then ` `, `-`, `+` lines; long unchanged runs folded). */
export function lineDiff(file: string, before: string | undefined, after: string): string {
  const a = before === undefined ? [] : before.replace(/\n$/, "").split("\n");
  const b = after.replace(/\n$/, "").split("\n");
  const out = [`--- ${before === undefined ? "/dev/null" : file}`, `+++ ${file}`];
  const lines: string[] = [];
  if (a.length * b.length > 4_000_000) {
    lines.push(...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`));
  } else {
    // Longest common subsequence, bounded above: client configs and tool definitions are small.
    const table = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--)
      for (let j = b.length - 1; j >= 0; j--) table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    let i = 0;
    let j = 0;
    // On a tie the removed line goes first, as unified diffs print a change: `-old` then `+new`.
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) {
        lines.push(` ${a[i]}`);
        i++;
        j++;
      } else if (i < a.length && (j === b.length || table[i + 1]![j]! >= table[i]![j + 1]!)) lines.push(`-${a[i++]}`);
      else lines.push(`+${b[j++]}`);
    }
  }
  // Keep 3 lines of context around changes.
  const changed = lines.map((l) => !l.startsWith(" "));
  lines.forEach((line, index) => {
    const near = changed.slice(Math.max(0, index - 3), index + 4).some(Boolean);
    if (near) out.push(line);
    else if (out[out.length - 1] !== " ...") out.push(" ...");
  });
  return `${out.join("\n")}\n`;
}
