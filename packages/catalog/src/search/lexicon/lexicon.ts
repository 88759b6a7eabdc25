import { wordTerm } from "../tokenize";
import { OTHER_WORDS, SENSE_GROUPS, VERBS } from "./lexicon-data.generated";

/**
 * The WordNet table, read on first use: the lemmas of each sense group, and the groups
 * each lemma (a word, or a phrase such as "throw away") belongs to. Loading only splits
 * strings; a query word is looked up by its dictionary forms ("restaurants" ->
 * restaurant), and what it relates to is stemmed when a query first asks for it.
 */
interface Lexicon {
  groups: string[][];
  /** Lemma -> the groups it is in. */
  groupsOf: Map<string, number[]>;
}

let lexicon: Lexicon | undefined;

/** Related terms already put together, per lemma; bounded like any cache of query words. */
const related = new Map<string, ReadonlyMap<string, number> | undefined>();
const RELATED_LIMIT = 10_000;

/**
 * The index terms WordNet relates to a word as the user wrote it (lower case): the words
 * that share one of its most frequent senses ("altitudes" -> "elevat"), each with
 * strength 1.
 */
export function relatedTerms(word: string): ReadonlyMap<string, number> | undefined {
  const forms = dictionaryForms(word);
  if (forms.length === 1) return relatedOf(word);
  // "links": the golf course and the plural of link.
  let union: Map<string, number> | undefined;
  for (const lemma of forms) {
    for (const [term, strength] of relatedOf(lemma) ?? []) (union ??= new Map()).set(term, strength);
  }
  const own = wordTerm(word);
  if (own !== undefined) union?.delete(own);
  return union;
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
  for (let n = Math.min(MAX_PHRASE, words.length - at); n >= 2; n--) {
    const rest = words.slice(at + 1, at + n).join(" ");
    for (const first of dictionaryForms(words[at] as string)) {
      const terms = relatedOf(`${first} ${rest}`);
      if (terms) return { length: n, related: terms };
    }
  }
  return undefined;
}

let known: Set<string> | undefined;

/** Whether a word as the user wrote it is an English word ("sea", "tides"), not a fragment ("screensh"). */
export function isWord(word: string): boolean {
  known ??= new Set([...VERBS.split(" "), ...OTHER_WORDS.split(" ")]);
  return dictionaryForms(word).some((form) => (known as Set<string>).has(form));
}

let verbs: Set<string> | undefined;

/** Whether a word as the user wrote it can be a verb: "link", "shelved". */
export function canBeVerb(word: string): boolean {
  verbs ??= new Set(VERBS.split(" "));
  return dictionaryForms(word).some((form) => (verbs as Set<string>).has(form));
}

/** Inflections and the base forms they come from, WordNet's own rules ("morphy"): "ies" -> "y", "ing" -> "e" or "". */
const DETACHMENTS: ReadonlyArray<readonly [string, string]> = [
  ["s", ""],
  ["ses", "s"],
  ["xes", "x"],
  ["zes", "z"],
  ["ches", "ch"],
  ["shes", "sh"],
  ["men", "man"],
  ["ies", "y"],
  ["es", "e"],
  ["es", ""],
  ["ed", "e"],
  ["ed", ""],
  ["ing", "e"],
  ["ing", ""],
  ["er", ""],
  ["est", ""],
];

/** The word and the base forms it may be an inflection of, the word first ("stopped" -> stopped, stopp, stop, stope). */
export function dictionaryForms(word: string): string[] {
  const forms = [word];
  for (const [suffix, base] of DETACHMENTS) {
    if (word.length <= suffix.length + 1 || !word.endsWith(suffix)) continue;
    const form = word.slice(0, -suffix.length) + base;
    forms.push(form);
    // "stopped", "running": a doubled last consonant.
    if (base === "" && /([^aeiou])\1$/.test(form)) forms.push(form.slice(0, -1));
  }
  return forms;
}

/** What a lemma relates to, as index terms: the one-word lemmas of its groups, stemmed. */
function relatedOf(lemma: string): ReadonlyMap<string, number> | undefined {
  if (related.has(lemma)) return related.get(lemma);
  lexicon ??= load();
  const own = lemma.includes(" ") ? undefined : wordTerm(lemma);
  let terms: Map<string, number> | undefined;
  for (const group of lexicon.groupsOf.get(lemma) ?? []) {
    for (const other of lexicon.groups[group] ?? []) {
      if (other.includes(" ")) continue;
      const term = wordTerm(other);
      if (term !== undefined && term !== own) (terms ??= new Map()).set(term, 1);
    }
  }
  if (related.size >= RELATED_LIMIT) related.clear();
  related.set(lemma, terms);
  return terms;
}

function load(): Lexicon {
  const groups: string[][] = [];
  const groupsOf = new Map<string, number[]>();
  for (const line of SENSE_GROUPS.split("\n")) {
    const group = groups.length;
    const lemmas = line.split(",");
    groups.push(lemmas);
    for (const lemma of lemmas) {
      const list = groupsOf.get(lemma);
      if (list === undefined) groupsOf.set(lemma, [group]);
      else list.push(group);
    }
  }
  return { groups, groupsOf };
}
