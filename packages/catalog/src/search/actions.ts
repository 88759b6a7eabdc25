import { stem } from "./stem";
import { ABBREVIATIONS } from "./synonyms";

/**
 * Verbs by the kind of change they make. Two verbs of different kinds contradict each
 * other: a query that lists must not be answered by a tool that deletes, nor a query
 * that starts something by a tool that stops it.
 */
const KINDS: Readonly<Record<string, string>> = {
  read: "get list show display view find search lookup locate discover fetch retrieve read load download pull query describe inspect browse",
  create: "create new add make insert append post write save upload push initialize generate leave",
  update: "update modify change edit patch alter amend set rename replace upgrade",
  delete: "delete remove drop erase destroy purge discard clean clear uninstall",
  start: "start begin launch enable connect",
  stop: "stop terminate kill halt cancel abort disable disconnect close",
};

/**
 * Verbs of no kind: a query that opens with one asks for no kind of change a tool could
 * contradict ("run" a query reads, "run" a job starts it).
 */
const OTHER_VERBS =
  "run execute invoke evaluate open move copy clone send reply respond merge commit attach detach check verify validate " +
  "analyze examine compare diff wait navigate visit click press type fill select hover drag scroll convert export import install " +
  "sort count scrape extract crawl monitor watch subscribe toggle forward scale apply restart reload refresh revert reset restore " +
  "undo compress archive login logout track identify trigger simulate emulate resize manage take capture record handle map " +
  "stage rebase tag blame fork review explain aggregate parse interact echo calculate translate format";

/** Verb stem -> its kind, or "" for a verb of no kind. */
const VERBS: ReadonlyMap<string, string> = (() => {
  const map = new Map<string, string>();
  for (const word of OTHER_VERBS.split(" ")) map.set(stem(word), "");
  for (const [kind, words] of Object.entries(KINDS)) for (const word of words.split(" ")) map.set(stem(word), kind);
  return map;
})();

/** Stemmed phrases that open with a verb but name a thing: "pull request", "merge request". */
const NOUN_PHRASES: ReadonlySet<string> = new Set(
  [...ABBREVIATIONS.values()].filter((words) => words.length > 1).map((words) => words.map(stem).join(" ")),
);

/** The verbs of a run of terms, except where a verb opens a noun phrase ("get_pull_request" does not pull). */
export function verbsOf(terms: readonly string[]): string[] {
  return terms.filter((_, i) => actsAt(terms, i));
}

/** The verbs a run of terms opens with: "Get or list pods" -> get, list. */
export function leadingVerbs(terms: readonly string[]): string[] {
  const end = terms.findIndex((_, i) => !actsAt(terms, i));
  return terms.slice(0, end < 0 ? terms.length : end);
}

function actsAt(terms: readonly string[], i: number): boolean {
  const term = terms[i] as string;
  return VERBS.has(term) && !NOUN_PHRASES.has(`${term} ${terms[i + 1]}`);
}

/** The kind of change a verb stem makes, or undefined for a verb of no kind or a non-verb. */
export function verbKind(term: string): string | undefined {
  return VERBS.get(term) || undefined;
}
