import { tokenize } from "../tokenize";
import { BROADER, OTHER_WORDS, SENSE_GROUPS, VERBS } from "./lexicon-data";

/** How strongly a broader word ("restaurant" for "cafe") stands for a word, against a word of the same sense. */
const BROADER_STRENGTH = 0.6;

/** Stemmed word or phrase ("get rid") -> stemmed related words, each with its strength (1 for the same sense). */
type Table = Map<string, Map<string, number>>;

let table: Table | undefined;

/**
 * The words WordNet relates to a stemmed word, or to a stemmed phrase of words joined by
 * spaces: words of its most frequent senses, and the words of those senses' broader
 * senses at a discount. Built on first use (a few milliseconds), not at import.
 */
export function relatedTerms(key: string): ReadonlyMap<string, number> | undefined {
  table ??= buildTable();
  return table.get(key);
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
  const relate = (keys: readonly string[], values: readonly string[], strength: number) => {
    for (const key of keys) {
      let related = out.get(key);
      for (const value of values) {
        if (value === key) continue;
        if (!related) out.set(key, (related = new Map()));
        if ((related.get(value) ?? 0) < strength) related.set(value, strength);
      }
    }
  };
  for (const line of SENSE_GROUPS.split("\n")) {
    const { keys, terms } = parse(line);
    relate(keys, terms, 1);
  }
  for (const line of BROADER.split("\n")) {
    const [narrow = "", broad = ""] = line.split(">");
    relate(parse(narrow).keys, parse(broad).terms, BROADER_STRENGTH);
  }
  return out;
}

/** The lookup keys of a comma-separated list of lemmas, and those of them that are one index term. */
function parse(list: string): { keys: string[]; terms: string[] } {
  const keys: string[] = [];
  const terms: string[] = [];
  for (const lemma of list.split(",")) {
    const stems = tokenize(lemma, { prose: true });
    // "put off" is not "put": a phrase left with one word by the stopword list is left out.
    if (stems.length === 0 || (stems.length === 1 && lemma.includes(" "))) continue;
    const key = stems.join(" ");
    keys.push(key);
    if (stems.length === 1) terms.push(key);
  }
  return { keys, terms };
}
