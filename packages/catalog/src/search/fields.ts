import { leadingVerbs, verbsOf } from "./actions";
import { tokenize } from "./tokenize";
import type { SearchDocument } from "./types";

/** The parts of a tool that are scored separately, in the order of `FIELD_WEIGHTS`. */
export const Field = { server: 0, name: 1, title: 2, summary: 3, description: 4, paramName: 5, paramDescription: 6 } as const;
export const FIELD_COUNT = 7;

/**
 * How much a match in each field counts, in the order of `Field`. The name says what a
 * tool does, the first sentence of the description says it again in prose; the rest of
 * the description and the parameters add vocabulary but also noise ("path", "limit",
 * "page" are everywhere). The server name is shared by all of a server's tools, so it
 * picks the server rather than the tool.
 */
export const FIELD_WEIGHTS: readonly number[] = [1.5, 3, 2, 1.5, 0.5, 0.6, 0.25];

/**
 * BM25 length normalisation per field. Low for the server (a constant) and for names
 * and titles, whose few words all matter; full for prose, where a long text mentions
 * many things in passing.
 */
export const FIELD_LENGTH_NORMS: readonly number[] = [0, 0.3, 0.3, 0.5, 0.75, 0.5, 0.75];

const PROSE = { prose: true } as const;

export interface DocumentFields {
  /** Terms per field, in the order of `Field`. */
  fields: string[][];
  /** Distinct tool-name terms that do not repeat the server name. */
  nameTerms: string[];
  /** Distinct terms of the description's first sentence. */
  summaryTerms: string[];
  /** Name, title and first sentence as written, lower case (camelCase names split), for words as written. */
  surface: string;
  /** Distinct adjacent term pairs of name and title, as "a b". */
  pairs: string[];
  /** What the tool does: the verbs of its name and those its first sentence opens with ("Get or list ..."). */
  actions: string[];
}

export function documentFields(doc: SearchDocument): DocumentFields {
  const server = tokenize(doc.server);
  const serverTerms = new Set(server);
  // "slack_post_message", "Git Status": words that repeat the server name say nothing
  // about what the tool does, and the server field already carries them.
  const notServer = (t: string) => !serverTerms.has(t);
  const name = tokenize(doc.name).filter(notServer);
  const title = tokenize(doc.title ?? "", PROSE).filter(notServer);
  const [first, rest] = splitSummary(doc.description ?? "");
  const summary = tokenize(first, PROSE);
  const fields = [
    server,
    name,
    title,
    summary,
    tokenize(rest, PROSE),
    doc.parameters.flatMap((p) => tokenize(p.name)),
    doc.parameters.flatMap((p) => [...tokenize(p.description ?? "", PROSE), ...valueTerms(p.values)]),
  ];
  const pairs = new Set<string>();
  for (const seq of [name, title]) {
    for (let i = 1; i < seq.length; i++) pairs.add(`${seq[i - 1]} ${seq[i]}`);
  }
  // "Notion | Append block children": the server name may open the sentence.
  const actions = new Set([...verbsOf(name), ...leadingVerbs(summary.filter(notServer))]);
  // One string, not a set of words: ten thousand tools' sets would double the index's build time and heap.
  const surface = `${splitCase(doc.name)} ${doc.title ?? ""} ${first}`.toLowerCase();
  return { fields, nameTerms: [...new Set(name)], summaryTerms: [...new Set(summary)], surface, pairs: [...pairs], actions: [...actions] };
}

/** Most enum values of one parameter indexed: a long list is data (country codes, time zones), not what the tool does. */
const MAX_VALUES = 10;

/** The terms of an enum parameter's values ("open", "closed"): what a tool can set says what it does. */
function valueTerms(values: readonly string[] | undefined): string[] {
  if (values === undefined || values.length > MAX_VALUES) return [];
  return values.flatMap((v) => (typeof v === "string" ? tokenize(v.slice(0, 100)) : []));
}

/** "getThreadReplies" -> "get Thread Replies". */
function splitCase(identifier: string): string {
  return identifier.replace(/(?<=[a-z0-9])(?=[A-Z])/g, " ");
}

/** The first sentence (or line) of a description, and the rest. */
function splitSummary(description: string): [string, string] {
  const text = description.trim();
  const end = text.search(/[.!?](\s|$)|\n/);
  if (end < 0) return [text, ""];
  return [text.slice(0, end + 1), text.slice(end + 1)];
}

/**
 * A term's occurrences in one tool, per field, packed four bits a field into one small
 * integer: postings of ten thousand tools stay flat numbers instead of arrays.
 */
const COUNT_BITS = 4;
const MAX_COUNT = 2 ** COUNT_BITS - 1;

/** `packed` with one more occurrence in field `f` (counts stop at 15; BM25 saturates long before). */
export function addOccurrence(packed: number, f: number): number {
  return occurrences(packed, f) === MAX_COUNT ? packed : packed + (1 << (f * COUNT_BITS));
}

export function occurrences(packed: number, f: number): number {
  return (packed >>> (f * COUNT_BITS)) & MAX_COUNT;
}
