import { stem } from "../stem";
import { tokenize } from "../tokenize";
import { BROADER, OTHER_WORDS, SENSE_GROUPS, VERBS } from "./lexicon-data";

/** How strongly a broader word ("restaurant" for "cafe") stands for a word, against a word of the same sense. */
const BROADER_STRENGTH = 0.6;

/** Stemmed word, or phrase key (see `phraseKey`) -> stemmed related words, each with its strength (1 for the same sense). */
type Table = Map<string, Map<string, number>>;

let table: Table | undefined;
let phrases: Table | undefined;

/**
 * The words WordNet relates to a stemmed word: words of its most frequent senses, and
 * the words of those senses' broader senses at a discount. Built on first use (a few
 * milliseconds), not at import.
 */
export function relatedTerms(term: string): ReadonlyMap<string, number> | undefined {
  table ??= buildTable();
  return table.get(term);
}

/** Longest phrase WordNet has that this lookup tries, in words. */
const MAX_PHRASE = 3;

/**
 * The phrase of two or three words (as `rawWords` gives them) that starts at `at`, if
 * WordNet has it: "throw away" (discard), "look for" (search), "pulled out" (extract).
 * Such phrasal verbs mean something their words do not, and their particles are
 * stopwords that word-by-word matching never sees.
 */
export function phraseAt(words: readonly string[], at: number): { length: number; related: ReadonlyMap<string, number> } | undefined {
  table ??= buildTable();
  for (let n = Math.min(MAX_PHRASE, words.length - at); n >= 2; n--) {
    const related = phrases?.get(phraseKey(words.slice(at, at + n)));
    if (related) return { length: n, related };
  }
  return undefined;
}


/** The first word stemmed ("pulled out" -> "pull out"), the rest as written. */
function phraseKey(words: readonly string[]): string {
  return [stem(words[0] ?? ""), ...words.slice(1)].join(" ");
}

let words: Set<string> | undefined;

/** Whether a stem is that of an English word the lexicon knows ("sea", not "screensh"). */
export function isWord(stem: string): boolean {
  words ??= new Set([...VERBS.split(" "), ...OTHER_WORDS.split(" ")].flatMap((w) => tokenize(w)));
  return words.has(stem);
}

let verbs: Set<string> | undefined;

/** Whether a lower-case word (not stemmed) can be a verb: "link", "shelve". */
export function canBeVerb(word: string): boolean {
  verbs ??= new Set(VERBS.split(" "));
  return verbs.has(word);
}

function buildTable(): Table {
  const out: Table = new Map();
  phrases = new Map();
  const relate = (keys: readonly string[], values: readonly string[], strength: number, into: Table = out) => {
    for (const key of keys) {
      let related = into.get(key);
      for (const value of values) {
        if (value === key) continue;
        if (!related) into.set(key, (related = new Map()));
        if ((related.get(value) ?? 0) < strength) related.set(value, strength);
      }
    }
  };
  for (const line of SENSE_GROUPS.split("\n")) {
    const { terms, phraseKeys } = parse(line);
    relate(terms, terms, 1);
    relate(phraseKeys, terms, 1, phrases);
  }
  for (const line of BROADER.split("\n")) {
    const [narrow = "", broad = ""] = line.split(">");
    relate(parse(narrow).terms, parse(broad).terms, BROADER_STRENGTH);
  }
  return out;
}

/** A comma-separated list of lemmas: the index terms of its one-word lemmas, and the keys of its phrases. */
function parse(list: string): { terms: string[]; phraseKeys: string[] } {
  const terms: string[] = [];
  const phraseKeys: string[] = [];
  for (const lemma of list.split(",")) {
    if (lemma.includes(" ")) {
      phraseKeys.push(phraseKey(lemma.split(" ")));
      continue;
    }
    const stems = tokenize(lemma, { prose: true });
    if (stems.length === 1) terms.push(stems[0] as string);
  }
  return { terms, phraseKeys };
}
