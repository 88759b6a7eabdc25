import { verbKind } from "./actions";
import { canBeVerb, relatedTerms } from "./lexicon/lexicon";
import { asksToRead } from "./query-action";
import { SYNONYMS } from "./synonyms";
import { rawWords, tokenize } from "./tokenize";

/** Score share taken from a tool whose verbs all contradict the query's verb ("list" vs "delete_"). */
const CONTRADICTION_PENALTY = 0.3;
/** The share of it between creating and changing. */
const WRITE_NEIGHBOUR_SHARE = 0.5;
/** The share of it a tool pays for not naming a query verb of no known kind. */
const UNKNOWN_VERB_SHARE = 1;

/** What a tool does, as `agreement` weighs it against a query's intent. */
export interface Acting {
  /** The verbs of its name and those its first sentence opens with. */
  actions: readonly string[];
  /** Their kinds of change. */
  kinds: ReadonlySet<string>;
  nameTerms: readonly string[];
}

/** What a query asks a tool to do: the kind of change ("" for a verb of no known kind), and the verbs that name it. */
export interface Intent {
  kind: string;
  verbs: Set<string>;
  /** Only implied, by a question or a noun phrase: a verb that names no kind of change does not contradict it. */
  implied: boolean;
}

/** What a query asks, from its opening verb, or from its being a question or a noun phrase. */
export function intentOf(query: string, verb: string | undefined, words: string[]): Intent | undefined {
  if (verb !== undefined) {
    const kind = verbKind(verb);
    return kind === undefined ? undefined : { kind, verbs: new Set([verb, ...(SYNONYMS.get(verb) ?? [])]), implied: false };
  }
  if (!asksToRead(query)) return unknownVerbIntent(query, tokenize(query, { prose: true })[0]);
  // "details of one commit" names the verb of `git_commit` as a thing, and does not contradict it.
  return { kind: "read", verbs: new Set(words.flatMap((w) => [w, ...(SYNONYMS.get(w) ?? [])])), implied: true };
}

/**
 * The intent of a query that opens with a phrasal verb: the kind of change of the first
 * of its meanings that has one ("throw away": discard, delete), else a verb of no known
 * kind that tools must name ("pull out": extract).
 */
export function phraseIntent(related: ReadonlyMap<string, number>, head: string | undefined): Intent {
  const verbs = new Set([...related.keys(), ...(head === undefined ? [] : [head])]);
  for (const term of related.keys()) {
    const kind = verbKind(term);
    if (kind !== undefined) return { kind, verbs, implied: false };
  }
  return { kind: "", verbs, implied: false };
}

/**
 * A query that opens with a verb of no known kind and its object ("link two entities"):
 * a tool that makes a known kind of change and names neither that verb nor a dictionary
 * synonym of it (`delete_entities`, against `create_relations`) loses a little.
 */
function unknownVerbIntent(query: string, first: string | undefined): Intent | undefined {
  const raw = rawWords(query)[0];
  if (first === undefined || raw === undefined || !canBeVerb(raw)) return undefined;
  return { kind: "", verbs: new Set([first, ...(SYNONYMS.get(first) ?? []), ...(relatedTerms(raw)?.keys() ?? [])]), implied: false };
}

/**
 * A tool none of whose verbs makes the kind of change the query asks for ("list pods"
 * against `delete_pod` or `exec_in_pod`, "notion page content" against
 * `update-page-markdown`) loses, unless one of them is the query's verb or a synonym; a
 * tool with no verb in its name or opening words keeps its score.
 */
export function agreement(entry: Acting, intent: Intent | undefined): number {
  if (intent === undefined || entry.actions.length === 0 || entry.kinds.has(intent.kind)) return 1;
  if (intent.kind === "") {
    if (entry.kinds.size === 0 || entry.nameTerms.some((t) => intent.verbs.has(t))) return 1;
    return 1 - CONTRADICTION_PENALTY * UNKNOWN_VERB_SHARE;
  }
  if (intent.implied && entry.kinds.size === 0) return 1;
  if (entry.actions.some((a) => intent.verbs.has(a))) return 1;
  // Creating and changing both write ("create or overwrite a file"); they are neighbours, not opposites.
  const writes = WRITES.has(intent.kind) && entry.kinds.size > 0 && [...entry.kinds].every((k) => WRITES.has(k));
  return 1 - CONTRADICTION_PENALTY * (writes ? WRITE_NEIGHBOUR_SHARE : 1);
}

const WRITES = new Set(["create", "update"]);
