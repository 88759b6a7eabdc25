import { leadingVerbs } from "./actions";
import { rawWords, tokenize } from "./tokenize";

/** Words that open a question: "who changed this line" asks about a change, it does not ask for one. */
const QUESTION_WORDS = new Set("who what which where when why how whose is are was does do did can".split(" "));

/**
 * How people open a request before its verb: "I want to", "can you", "help me", "how do
 * I". "How do I delete a branch" asks to delete, not a question about deleting.
 */
const PREAMBLE =
  /^\s*(?:(?:please|kindly|hey|hi|ok|okay|so|now)[\s,]+)*(?:(?:i|we)\s*(?:'d|would)?\s*(?:want|need|wish|like|have|'m trying|am trying|are trying|'re trying|'m looking|am looking)\s+to|(?:can|could|would|will)\s+you(?:\s+please)?|help\s+me(?:\s+to)?|let\s+me|let's|how\s+(?:do|can|could|should|would)\s+(?:i|we|you)|how\s+to|is\s+(?:there\s+a\s+way|it\s+possible)\s+to)\b[\s,]*/i;

/** The request without its preamble ("I want to persist ..." -> "persist ..."). */
export function withoutPreamble(query: string): string {
  const request = query.replace(PREAMBLE, "");
  return request.trim() === "" ? query : request;
}

/** The verb a query opens with, stemmed ("delete old branches" -> "delet"), if it opens with one. */
export function queryAction(query: string): string | undefined {
  query = withoutPreamble(query);
  const words = rawWords(query);
  if (QUESTION_WORDS.has(words[0] ?? "")) return undefined;
  return leadingVerbs(tokenize(query, { prose: true }).slice(0, 2))[0];
}

/** Words after which the word before them is a verb: "link two", "file a", "comment on". */
const OBJECT_OPENERS = new Set(
  "a an the this that these those my our your their its some every each one two three four five six seven eight nine ten on to away up out off down back over about".split(
    " ",
  ),
);

/**
 * Whether a query without a leading verb asks to read: a question ("who changed this
 * line") or a noun phrase ("details of one commit"), not an unknown verb ("link two
 * entities", "file a bug").
 */
export function asksToRead(query: string): boolean {
  query = withoutPreamble(query);
  const words = rawWords(query);
  if (words.length === 0 || queryAction(query) !== undefined) return false;
  if (QUESTION_WORDS.has(words[0] as string)) return true;
  const next = words[1];
  return next === undefined || !(OBJECT_OPENERS.has(next) || /^[0-9]+$/.test(next));
}

/** What opens a part of a request that says what the user does not want: "fetch updates without merging". */
// Up to three words, then the end, a punctuation mark or a conjunction; words are whole, so matching stays linear.
const EXCLUSION =
  /\b(?:without|except(?:\s+for)?|excluding|instead\s+of|rather\s+than|other\s+than)\s+[a-z0-9'-]+(?:\s+[a-z0-9'-]+){0,2}?(?=\s*(?:$|[,.;:!?)])|\s+(?:and|but|or|then|so|because)\b)/gi;

/**
 * The request without what it excludes ("move the mouse over a button without clicking"
 * -> "move the mouse over a button"): a word the user does not want must not pull
 * towards the tools that do it. Unchanged when nothing else would be left.
 */
export function withoutExclusions(query: string): string {
  if (query.length > 1000) return query;
  const kept = query.replace(EXCLUSION, " ");
  return kept === query || rawWords(kept).length === 0 ? query : kept;
}
