import { isVerb } from "./actions";
import { rawWords, tokenize } from "./tokenize";

/**
 * Words that end the object of a query and start its context: in "remove a relation
 * between entities" the tool wanted is about relations, entities only say where.
 */
const CONTEXT_MARKERS = new Set(
  (
    "in on at by for with from into onto via per of to between about through across inside within without under over " +
    "after before like as against during near than where that which whose when matching containing using including"
  ).split(" "),
);

/** A query's terms by the part they play: "delete (action) old branches (object) in gitlab (context)". */
export interface QueryRoles {
  /** The first word when it is a verb: what the tool should do. */
  action: string | undefined;
  /** The terms of the first phrase after the action: what the tool should act on. */
  object: Set<string>;
  /** Terms after the object: where or with what. */
  context: Set<string>;
}

export function queryRoles(query: string): QueryRoles {
  const roles: QueryRoles = { action: undefined, object: new Set(), context: new Set() };
  let seenTerm = false;
  let inContext = false;
  for (const word of rawWords(query)) {
    if (CONTEXT_MARKERS.has(word)) {
      if (roles.object.size > 0) inContext = true;
      continue;
    }
    for (const term of tokenize(word)) {
      if (!seenTerm && isVerb(term)) roles.action = term;
      else if (!roles.object.has(term) && term !== roles.action) (inContext ? roles.context : roles.object).add(term);
      seenTerm = true;
    }
  }
  return roles;
}
