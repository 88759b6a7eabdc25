const VOWEL = /[aeiouy]/;

/**
 * A light English stemmer: inflections (-s, -es, -ies, -ing, -ed, -ly) and a few
 * derivations (-ation, -ion, -ate, -ment), then a final -e. It only has to map the
 * forms of one word to the same key, never to a real root ("create", "created",
 * "creation" -> "creat"), so it stays far smaller than Porter's.
 */
export function stem(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  let w = plural(word);
  w = inflection(w);
  w = derivation(w);
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

function plural(w: string): string {
  if (w.endsWith("ies") && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith("sses")) return w.slice(0, -2);
  if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) return w.slice(0, -1);
  return w;
}

function inflection(w: string): string {
  for (const suffix of ["ing", "ed"]) {
    if (!w.endsWith(suffix)) continue;
    const base = w.slice(0, -suffix.length);
    // "string", "red": what is left must still look like a word.
    if (base.length < 3 || !VOWEL.test(base)) return w;
    // running -> run, but keep "pass", "call", "buzz".
    if (/([^aeiouslz])\1$/.test(base)) return base.slice(0, -1);
    // created -> create, so that it meets "create" again below.
    if (/(at|bl|iz)$/.test(base)) return `${base}e`;
    // modified -> modify, copied -> copy.
    if (suffix === "ed" && base.endsWith("i")) return `${base.slice(0, -1)}y`;
    return base;
  }
  if (w.endsWith("ly") && w.length >= 7) return w.slice(0, -2);
  return w;
}

function derivation(w: string): string {
  if (w.endsWith("ation") && w.length - 5 >= 5) return w.slice(0, -5);
  if (w.endsWith("ate") && w.length - 3 >= 5) return w.slice(0, -3);
  if (/[st]ion$/.test(w) && w.length - 3 >= 4) return w.slice(0, -3);
  if (w.endsWith("ment") && w.length - 4 >= 5) return w.slice(0, -4);
  return w;
}
