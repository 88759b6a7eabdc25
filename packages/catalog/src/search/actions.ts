import { stem } from "./stem";

/**
 * Verbs by the kind of change they make. Two verbs of different kinds contradict each
 * other: a query that lists must not be answered by a tool that deletes, nor a query
 * that starts something by a tool that stops it.
 */
const KINDS: Readonly<Record<string, string>> = {
  read: "get list show display view find search lookup locate discover fetch retrieve read load download pull query describe inspect browse",
  create: "create new add make insert append post write save upload push initialize generate leave report",
  update: "update modify change edit patch alter amend set rename replace upgrade mark resolve reopen assign",
  delete: "delete remove drop erase destroy purge discard clean clear uninstall forget",
  start: "start begin launch enable connect record",
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
  "undo compress archive login logout track identify trigger simulate emulate resize manage take capture handle map " +
  "stage rebase tag blame fork review explain aggregate parse interact echo calculate translate format";

/** Verb stem -> its kind, or "" for a verb of no kind. */
const VERBS: ReadonlyMap<string, string> = (() => {
  const map = new Map<string, string>();
  for (const word of OTHER_VERBS.split(" ")) map.set(stem(word), "");
  for (const [kind, words] of Object.entries(KINDS)) for (const word of words.split(" ")) map.set(stem(word), kind);
  return map;
})();

/** The verbs of a run of terms (`tokenize` has made "pull request" one noun, so "get_pull_request" does not pull). */
export function verbsOf(terms: readonly string[]): string[] {
  return terms.filter((term) => VERBS.has(term));
}

/** The verbs a run of terms opens with: "Get or list pods" -> get, list. */
export function leadingVerbs(terms: readonly string[]): string[] {
  const end = terms.findIndex((term) => !VERBS.has(term));
  return terms.slice(0, end < 0 ? terms.length : end);
}

/** The kind of change a verb stem makes, or undefined for a verb of no kind or a non-verb. */
export function verbKind(term: string): string | undefined {
  return VERBS.get(term) || undefined;
}
