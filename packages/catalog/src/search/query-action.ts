import { leadingVerbs } from "./actions";
import { rawWords, tokenize } from "./tokenize";

/** Words that open a question: "who changed this line" asks about a change, it does not ask for one. */
const QUESTION_WORDS = new Set("who what which where when why how whose is are was does do did can".split(" "));

/** The verb a query opens with, stemmed ("delete old branches" -> "delet"), if it opens with one. */
export function queryAction(query: string): string | undefined {
  const words = rawWords(query);
  if (QUESTION_WORDS.has(words[0] ?? "")) return undefined;
  return leadingVerbs(tokenize(query, { prose: true }).slice(0, 2))[0];
}
