import { stem } from "./stem";
import { ABBREVIATIONS } from "./synonyms";

const STOPWORDS = new Set(
  (
    "a an the and or nor but if then else of to in on at by for with from into onto as via per " +
    "is are was were be been being am do does did doing done have has had having will would shall should can could may might must " +
    "it its this that these those there here what which who whom whose when where why how " +
    "i me my mine we us our you your he him his she her they them their " +
    "all any each every both either neither some such no not only own same other another so than too very just also again further once " +
    "about above below over under up out off between through during before after until while against " +
    "anything everything something nothing " +
    "please want wants need needs let lets like give tell"
  ).split(" "),
);

export interface TokenizeOptions {
  /**
   * The text is prose (a description, a query), where a capitalised word of capitalised
   * parts is a name ("GitHub", "DevTools", "DaemonSet") and stays one word; in an
   * identifier ("CreateIssue") such parts are words of their own.
   */
  prose?: boolean;
}

const BRAND = /^[A-Z][a-z]+(?:[A-Z][a-z]+)+$/;

/** Chunk -> terms. Tool catalogs repeat their words a lot; bounded so that odd input cannot grow it forever. */
const cache = new Map<string, readonly string[]>();
const CACHE_LIMIT = 50_000;

/**
 * The index terms of a text. Identifiers are split the way tool names mix them
 * (camelCase, PascalCase, snake_case, kebab-case, `API-post-page`, letter-digit runs),
 * abbreviations are spelled out ("repo" -> "repository", "PR" -> "pull request"),
 * stopwords and one-letter words dropped, and each word stemmed. Documents and
 * queries both go through here, so they meet on the same terms.
 */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const prose = options.prose === true;
  const terms: string[] = [];
  for (const chunk of text.split(/[^A-Za-z0-9]+/)) {
    if (!chunk) continue;
    const key = prose ? `\u0000${chunk}` : chunk;
    let chunkTerms = cache.get(key);
    if (!chunkTerms) {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(key, (chunkTerms = termsOf(prose && BRAND.test(chunk) ? chunk.toLowerCase() : chunk)));
    }
    terms.push(...chunkTerms);
  }
  return joinPhrases(terms);
}

/** Stemmed first word -> second word, of the two-word phrases abbreviations stand for. */
const PHRASES: ReadonlyMap<string, string> = new Map(
  [...ABBREVIATIONS.values()].filter((words) => words.length === 2).map((words) => [stem(words[0] as string), stem(words[1] as string)]),
);

/** "pull request": the first word of such a phrase is part of a noun, not the verb "pull" of `git_pull`. */
function joinPhrases(terms: string[]): string[] {
  for (let i = 0; i + 1 < terms.length; i++) {
    const first = terms[i] as string;
    if (PHRASES.get(first) === terms[i + 1]) terms[i] = `${first}${terms[i + 1]}`;
  }
  return terms;
}

/**
 * The index term of one lower-case word ("altitudes" -> "altitud"), undefined for a
 * stopword: what `tokenize` gives for it, without its cache and splitting, for word lists.
 */
export function wordTerm(word: string): string | undefined {
  if (longForm(word)) return tokenize(word).length === 1 ? tokenize(word)[0] : undefined;
  return word.length > 1 && !STOPWORDS.has(word) ? stem(word) : undefined;
}

function termsOf(chunk: string): string[] {
  const terms: string[] = [];
  for (const word of splitIdentifier(chunk)) {
    for (const w of longForm(word) ?? [word]) {
      if (w.length > 1 && !STOPWORDS.has(w)) terms.push(stem(w));
    }
  }
  return terms;
}

/** What an abbreviation, singular or plural ("PRs", "repos"), stands for. */
function longForm(word: string): readonly string[] | undefined {
  return ABBREVIATIONS.get(word) ?? (word.endsWith("s") ? ABBREVIATIONS.get(word.slice(0, -1)) : undefined);
}

function splitIdentifier(chunk: string): string[] {
  const lower = chunk.toLowerCase();
  // "k8s", "PRs": abbreviations that case or digit splitting would break apart.
  if (longForm(lower)) return [lower];
  return chunk
    .replace(/(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])/g, " ")
    .toLowerCase()
    .split(" ");
}

/**
 * Runs of two and three adjacent words written as one, stemmed ("who am I" -> "whoami",
 * "file system" -> "filesystem", "working tree" -> "worktree"): tool names often spell a
 * phrase as one word, which word-by-word matching cannot find. Stopwords stay in, they
 * are part of such names.
 */
export function compounds(text: string): string[] {
  const words = rawWords(text);
  const out = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    for (let n = 2; n <= 3 && i + n <= words.length; n++) {
      const run = words.slice(i, i + n);
      out.add(stem(run.join("")));
      // "working tree" -> "worktree": names join the stems of words as often as the words.
      out.add(run.map(stem).join(""));
    }
  }
  return [...out];
}

/** The words of a text in order, identifiers split, lower-cased, neither stemmed nor filtered. */
export function rawWords(text: string): string[] {
  return text.split(/[^A-Za-z0-9]+/).flatMap((chunk) => (chunk ? splitIdentifier(chunk) : []));
}
