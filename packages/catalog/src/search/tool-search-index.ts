import { verbKind } from "./actions";
import { replacementName, saysDeprecated } from "./deprecation";
import { withinOneEdit } from "./edit-distance";
import { FIELD_COUNT, FIELD_LENGTH_NORMS, FIELD_WEIGHTS, Field, addOccurrence, documentFields, occurrences } from "./fields";
import { agreement, intentOf, phraseIntent } from "./intent";
import { isWord, phraseAt, relatedTerms } from "./lexicon/lexicon";
import { queryAction, withoutExclusions, withoutPreamble } from "./query-action";
import { stem } from "./stem";
import { SYNONYMS } from "./synonyms";
import { compounds, rawWords, tokenize, wordTerm } from "./tokenize";
import type { SearchDocument, SearchHit, SearchKind, SearchOptions } from "./types";

/** BM25 term-frequency saturation. */
const K1 = 1.2;
/** What a match through a looser form of the query word is worth against the word itself. */
const SYNONYM_WEIGHT = 0.75;
const PREFIX_WEIGHT = 0.6;
/** The share of `PREFIX_WEIGHT` left to completions of a query word that is a dictionary word itself. */
const WORD_PREFIX_SHARE = 0.5;
const TYPO_WEIGHT = 0.5;
/** What a phrasal verb's one-word meaning ("throw away": discard) is worth: as much as a synonym. */
const PHRASE_WEIGHT = 0.75;
/** What a word that WordNet gives one of the same senses is worth (see `relatedTerms`). */
const LEXICON_WEIGHT = 0.5;
/** Shortest query word completed by prefix, and shortest one forgiven a typo. */
const MIN_PREFIX = 3;
const MIN_TYPO = 5;
/** Shortest part a joined query word is split into, and the longest word tried (each try stems both parts). */
const MIN_SPLIT = 3;
const MAX_SPLIT = 40;
/** Most vocabulary terms one query word expands to by prefix. */
const MAX_PREFIX_TERMS = 30;
/** Score multiplier for a tool whose name words are all matched by the query. */
const NAME_COVERAGE_BONUS = 0.5;
/** Score share that depends on how many of the query's words a tool matches. */
const COVERAGE_SHARE = 0.6;
/** Score multiplier per adjacent query word pair found adjacent in the name or title. */
const PAIR_BONUS = 0.15;
/** Score multiplier for the tools of a server that the query names ("... in gitlab"). */
const SERVER_BONUS = 1;
/** Score multiplier for a tool whose first sentence the query covers: the tie-break between tools that all match the name. */
const SUMMARY_COVERAGE_BONUS = 0.3;
/** Score share for the query's words a tool's name, title or first sentence has exactly as written, not only by stem. */
const SURFACE_BONUS = 0.1;
/** Score multiplier for a tool whose description says it is deprecated ("DEPRECATED: Use read_text_file instead"). */
const DEPRECATED_FACTOR = 0.7;

interface Entry {
  id: string;
  /** The tool's own name, for finding it as another tool's replacement. */
  name: string;
  kind: SearchKind;
  server: string;
  slot: number;
  /** Term -> packed occurrences per field (see `addOccurrence`). */
  terms: Map<string, number>;
  lengths: number[];
  nameTerms: string[];
  summaryTerms: string[];
  pairs: string[];
  surface: string;
  actions: string[];
  /** The kinds of change (see `verbKind`) of `actions`. */
  kinds: Set<string>;
  /** The description says the tool is deprecated: it ranks below its replacement. */
  deprecated: boolean;
  /** The name of the tool a deprecated tool's description points to instead. */
  replacedBy: string | undefined;
}

/** The variants of one query word that occur in the index, each with its weight. */
type Concept = Map<string, number>;

/**
 * Ranks tools for a free-text query with BM25F over the tool's fields (server, name,
 * title, first sentence, rest of the description, parameter names and descriptions),
 * widened by everyday and dictionary (WordNet) synonyms, phrasal verbs, joined words
 * split, prefixes and one-letter typos, what a question asks for ("how far": distance),
 * less what the query excludes ("... without merging"), and sharpened by how many query words a tool
 * covers, how much of its name and first sentence they cover, query words it has as
 * written and not only by stem, adjacent word pairs, a
 * server the query names, whether the tool's verbs contradict the query's ("list ..."
 * is not answered by `delete_*`), and deprecation (a deprecated tool ranks below the
 * replacement it names). Documents of other kinds (resources, prompts, skills) may share
 * the index without moving tool scores.
 *
 * Adding or removing a tool touches only that tool's terms. Document frequencies and
 * field length sums are running counts; what depends on them per tool (length
 * normalisation, the weight of its name) is recomputed lazily, when the collection
 * changed since the tool was last scored.
 */
export class ToolSearchIndex {
  readonly #byId = new Map<string, Entry>();
  /** "server\u0000name" -> entry. */
  readonly #byName = new Map<string, Entry>();
  /** Tools get a slot number so that postings and per-search scores are flat numbers. */
  readonly #slots: Array<Entry | undefined> = [];
  readonly #freeSlots: number[] = [];
  /** Term -> slot -> packed occurrences. */
  readonly #postings = new Map<string, Map<number, number>>();
  /** Adjacent term pair ("pull request") -> slots whose name or title has it. */
  readonly #pairPostings = new Map<string, Set<number>>();
  /**
   * Collection statistics count tools only (tool count, field length sums, and document
   * frequencies as postings less the documents of other kinds), so that resources,
   * prompts and skills sharing the index do not move the scores of tools; other kinds
   * are scored against the tools' statistics.
   */
  readonly #lengthSums = new Float64Array(FIELD_COUNT);
  /** Term -> documents of kinds other than tool that have it. */
  readonly #otherFrequency = new Map<string, number>();
  #tools = 0;
  /** Bumped on every change, so that per-slot statistics go stale. */
  #generation = 0;
  /** Per slot: length normalisation per field, and the idf sums of its name and first-sentence terms, as of `#statsAt`. */
  #norms = new Float64Array(0);
  #nameWeights = new Float64Array(0);
  #summaryWeights = new Float64Array(0);
  #statsAt = new Int32Array(0);
  /** Sorted vocabulary for prefix and typo lookups; rebuilt on first use after a change. */
  #vocabulary: string[] | undefined;

  get size(): number {
    return this.#byId.size;
  }

  add(doc: SearchDocument): void {
    this.remove(doc.id);
    const { fields, nameTerms, summaryTerms, surface, pairs, actions } = documentFields(doc);
    const terms = new Map<string, number>();
    fields.forEach((fieldTerms, f) => {
      for (const term of fieldTerms) terms.set(term, addOccurrence(terms.get(term) ?? 0, f));
    });
    const lengths = fields.map((fieldTerms) => fieldTerms.length);
    const slot = this.#freeSlots.pop() ?? this.#slots.length;
    const kinds = new Set(actions.flatMap((a) => verbKind(a) ?? []));
    const entry: Entry = {
      id: doc.id,
      name: doc.name,
      kind: doc.kind ?? "tool",
      server: doc.server,
      slot,
      terms,
      lengths,
      nameTerms,
      summaryTerms,
      surface,
      pairs,
      actions,
      kinds,
      deprecated: false,
      replacedBy: undefined,
    };
    if (saysDeprecated(doc.description ?? "")) {
      entry.deprecated = true;
      entry.replacedBy = replacementName(doc.description ?? "");
    }
    this.#slots[slot] = entry;
    this.#byId.set(doc.id, entry);
    this.#byName.set(`${doc.server}\u0000${doc.name}`, entry);
    this.#ensureCapacity(this.#slots.length);
    this.#statsAt[slot] = -1;
    this.#count(entry, 1);
    for (const [term, packed] of terms) {
      let posting = this.#postings.get(term);
      if (!posting) {
        this.#postings.set(term, (posting = new Map()));
        this.#vocabulary = undefined;
      }
      posting.set(slot, packed);
    }
    for (const pair of pairs) {
      let posting = this.#pairPostings.get(pair);
      if (!posting) this.#pairPostings.set(pair, (posting = new Set()));
      posting.add(slot);
    }
    this.#generation++;
  }

  remove(id: string): void {
    const entry = this.#byId.get(id);
    if (!entry) return;
    const { slot } = entry;
    this.#byId.delete(id);
    if (this.#byName.get(`${entry.server}\u0000${entry.name}`) === entry) this.#byName.delete(`${entry.server}\u0000${entry.name}`);
    this.#slots[slot] = undefined;
    this.#freeSlots.push(slot);
    this.#count(entry, -1);
    for (const term of entry.terms.keys()) {
      const posting = this.#postings.get(term);
      posting?.delete(slot);
      if (posting?.size === 0) {
        this.#postings.delete(term);
        this.#vocabulary = undefined;
      }
    }
    for (const pair of entry.pairs) {
      const posting = this.#pairPostings.get(pair);
      posting?.delete(slot);
      if (posting?.size === 0) this.#pairPostings.delete(pair);
    }
    this.#generation++;
  }

  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const limit = options.limit ?? 10;
    query = withoutExclusions(query);
    const words = tokenize(query, { prose: true }).flatMap((w) => this.#split(w) ?? [w]);
    const verb = queryAction(query);
    const raw = rawWords(query);
    // The words as written, for the dictionary: it knows "restaurants", not "restaur".
    const written = new Map<string, string>();
    for (const w of raw) {
      const term = wordTerm(w);
      if (term !== undefined && !written.has(term)) written.set(term, w);
    }
    const expanded = new Map(words.map((w) => [w, this.#expand(w, written.get(w))]));
    const request = withoutPreamble(query);
    const phrases = this.#phrases(raw, expanded, raw.length - rawWords(request).length);
    const concepts = [...expanded.values(), ...phrases.extra].filter((c) => c.size > 0);
    for (const asked of askedAbout(raw)) {
      const concept: Concept = new Map();
      for (const word of asked) {
        const term = stem(word);
        if (this.#postings.has(term)) concept.set(term, PHRASE_WEIGHT);
      }
      if (concept.size > 0) concepts.push(concept);
    }
    for (const compound of compounds(query)) {
      if (this.#postings.has(compound) && !expanded.has(compound)) concepts.push(new Map([[compound, 1]]));
    }
    if (concepts.length === 0 || limit <= 0) return [];

    const filtered = options.server !== undefined || options.kinds !== undefined || options.visible !== undefined;
    const capacity = this.#slots.length;
    const sums = new Float64Array(capacity);
    const matched = new Uint16Array(capacity);
    const best = new Float64Array(capacity);
    const nameCovered = new Float64Array(capacity);
    const summaryCovered = new Float64Array(capacity);
    const serverNamed = new Float64Array(capacity);
    const touched: number[] = [];
    const credited = new Set<string>();
    let conceptsMatched = 0;
    const countsTools = options.kinds === undefined || options.kinds.includes("tool");
    for (const concept of concepts) {
      const conceptTouched: number[] = [];
      // A rare synonym must not make a common query word count for more than itself.
      const exact = [...concept].find(([, weight]) => weight === 1)?.[0];
      const cap = exact === undefined ? Infinity : this.#idf(exact);
      const serverShare = exact === undefined ? 0 : this.#serverShare(exact);
      for (const [term, weight] of concept) {
        const idf = Math.min(this.#idf(term), cap);
        // A term two query words share counts once towards name coverage.
        const creditName = !credited.has(term);
        credited.add(term);
        this.#postings.get(term)?.forEach((packed, slot) => {
          if (filtered && !this.#wanted(slot, options)) return;
          const s = weight * idf * this.#saturate(slot, packed);
          if (best[slot] === 0) conceptTouched.push(slot);
          if (s > (best[slot] as number)) best[slot] = s;
          if (creditName && occurrences(packed, Field.name) > 0) nameCovered[slot] = (nameCovered[slot] as number) + idf;
          if (creditName && occurrences(packed, Field.summary) > 0) summaryCovered[slot] = (summaryCovered[slot] as number) + idf;
          if (term === exact && occurrences(packed, Field.server) > 0 && serverShare > (serverNamed[slot] as number)) serverNamed[slot] = serverShare;
        });
      }
      // A word that only documents left out by the options have must not water down coverage.
      // Counted over tools when tools are wanted: a word only a prompt or a skill has must not lower the tools' coverage.
      if (countsTools ? conceptTouched.some((slot) => (this.#slots[slot] as Entry).kind === "tool") : conceptTouched.length > 0) conceptsMatched++;
      // A tool scores a query word once, by its best-matching variant.
      for (const slot of conceptTouched) {
        if (matched[slot] === 0) touched.push(slot);
        sums[slot] = (sums[slot] as number) + (best[slot] as number);
        matched[slot] = (matched[slot] as number) + 1;
        best[slot] = 0;
      }
    }

    const pairHits = new Uint8Array(capacity);
    for (let i = 1; i < words.length; i++) {
      for (const slot of this.#pairSlots(expanded.get(words[i - 1] as string), expanded.get(words[i] as string))) {
        pairHits[slot] = (pairHits[slot] as number) + 1;
      }
    }
    // The query's words as written: "replies" is nearer `get_thread_replies` than `reply_to_thread`, though both stem to "reply".
    const surfaceWords = [...new Set(raw.filter((w) => wordTerm(w) !== undefined))];
    const first = tokenize(request, { prose: true })[0];
    const intent = phrases.opening ? phraseIntent(phrases.opening, first) : intentOf(request, verb, words);
    const top: SearchHit[] = [];
    const inherited: Array<[Entry, number]> = [];
    for (const slot of touched) {
      const coverage = Math.min(1, (matched[slot] as number) / Math.max(1, conceptsMatched));
      const nameWeight = this.#nameWeights[slot] as number;
      const nameCoverage = nameWeight > 0 ? Math.min(1, (nameCovered[slot] as number) / nameWeight) : 0;
      const summaryWeight = this.#summaryWeights[slot] as number;
      const summaryCoverage = summaryWeight > 0 ? Math.min(1, (summaryCovered[slot] as number) / summaryWeight) : 0;
      let score =
        (sums[slot] as number) *
        (1 - COVERAGE_SHARE + COVERAGE_SHARE * coverage) *
        (1 + NAME_COVERAGE_BONUS * nameCoverage) *
        (1 + SUMMARY_COVERAGE_BONUS * summaryCoverage) *
        (1 + PAIR_BONUS) ** (pairHits[slot] as number) *
        (1 + SERVER_BONUS * (serverNamed[slot] as number));
      // The surface bonus is the last thing that can raise a score, agreement only lowers it: a tool that cannot make the top is not looked at.
      if (top.length === limit && score * (1 + SURFACE_BONUS) < (top[limit - 1] as SearchHit).score) continue;
      const entry = this.#slots[slot] as Entry;
      if (surfaceWords.length > 0) score *= 1 + (SURFACE_BONUS * sameWords(entry.surface, surfaceWords)) / surfaceWords.length;
      score *= agreement(entry, intent);
      if (entry.deprecated) {
        const replacement = this.#replacementOf(entry);
        if (replacement && (!filtered || this.#wanted(replacement.slot, options))) inherited.push([replacement, score]);
        score *= DEPRECATED_FACTOR;
      }
      if (top.length < limit || score >= (top[limit - 1] as SearchHit).score) {
        insertTop(top, { id: entry.id, kind: entry.kind, score }, limit);
      }
    }
    // A replacement answers whatever its deprecated tool answers, at least as well.
    for (const [replacement, score] of inherited) {
      const at = top.findIndex((hit) => hit.id === replacement.id);
      if (at >= 0 && (top[at] as SearchHit).score >= score) continue;
      if (at >= 0) top.splice(at, 1);
      insertTop(top, { id: replacement.id, kind: replacement.kind, score }, limit);
    }
    return top;
  }

  /** The tool of the same server that a deprecated tool's description names ("Use read_text_file instead"). */
  #replacementOf(entry: Entry): Entry | undefined {
    if (entry.replacedBy === undefined) return undefined;
    const replacement = this.#byName.get(`${entry.server}\u0000${entry.replacedBy}`);
    return replacement === entry ? undefined : replacement;
  }

  #wanted(slot: number, options: SearchOptions): boolean {
    const entry = this.#slots[slot] as Entry;
    return (
      (options.server === undefined || entry.server === options.server) &&
      (options.kinds === undefined || options.kinds.includes(entry.kind)) &&
      (options.visible === undefined || options.visible(entry))
    );
  }

  /** Slots with two adjacent query words (or their synonyms: "remove relation" meets "delete_relations") adjacent. */
  #pairSlots(first: Concept | undefined, second: Concept | undefined): Set<number> {
    const slots = new Set<number>();
    for (const [a, aWeight] of first ?? []) {
      if (aWeight < SYNONYM_WEIGHT) continue;
      for (const [b, bWeight] of second ?? []) {
        if (bWeight < SYNONYM_WEIGHT) continue;
        for (const slot of this.#pairPostings.get(`${a} ${b}`) ?? []) slots.add(slot);
      }
    }
    return slots;
  }

  /**
   * A word no tool has, split into two that tools have ("cherrypick" -> cherry,
   * pick), choosing the split whose rarer half is most telling; undefined when none fits.
   */
  #split(word: string): [string, string] | undefined {
    if (word.length < 2 * MIN_SPLIT || word.length > MAX_SPLIT || this.#toolsHave(word)) return undefined;
    let best: [string, string] | undefined;
    let bestIdf = 0;
    for (let i = MIN_SPLIT; i <= word.length - MIN_SPLIT; i++) {
      const a = stem(word.slice(0, i));
      const b = stem(word.slice(i));
      if (!this.#toolsHave(a) || !this.#toolsHave(b)) continue;
      const idf = Math.min(this.#idf(a), this.#idf(b));
      if (idf > bestIdf) [best, bestIdf] = [[a, b], idf];
    }
    return best;
  }

  /**
   * The phrasal verbs of a query ("throw away", "look for"): what they mean joins the
   * concept of their first word, or is a concept of its own when that word is a stopword.
   * Returns those extra concepts and what a phrase that opens the query means.
   */
  #phrases(raw: readonly string[], expanded: Map<string, Concept>, start: number): { extra: Concept[]; opening: ReadonlyMap<string, number> | undefined } {
    const extra: Concept[] = [];
    let opening: ReadonlyMap<string, number> | undefined;
    for (let i = 0; i < raw.length - 1; i++) {
      const phrase = joinedPhrase(raw, i) ?? phraseAt(raw, i);
      if (!phrase) continue;
      if (i === start) opening = phrase.related;
      const head = tokenize(raw[i] as string)[0];
      let concept = head === undefined ? undefined : expanded.get(head);
      if (!concept) extra.push((concept = new Map()));
      for (const [term, strength] of phrase.related) {
        const weight = PHRASE_WEIGHT * strength;
        if (this.#postings.has(term) && weight > (concept.get(term) ?? 0)) concept.set(term, weight);
      }
      i += phrase.length - 1;
    }
    return { extra, opening };
  }

  /** The index terms a query word (stemmed, and as written when it was) stands for: itself, its synonyms, completions, near-misses. */
  #expand(word: string, written: string | undefined): Concept {
    const concept: Concept = new Map();
    const offer = (term: string, weight: number) => {
      if (this.#postings.has(term) && weight > (concept.get(term) ?? 0)) concept.set(term, weight);
    };
    offer(word, 1);
    for (const synonym of SYNONYMS.get(word) ?? []) offer(synonym, SYNONYM_WEIGHT);
    for (const [term, strength] of (written === undefined ? undefined : relatedTerms(written)) ?? []) offer(term, LEXICON_WEIGHT * strength);
    if (word.length >= MIN_PREFIX) {
      // "sea" is a word of its own, not the start of "search"; "screensh" is a start.
      const weight = written !== undefined && isWord(written) ? PREFIX_WEIGHT * WORD_PREFIX_SHARE : PREFIX_WEIGHT;
      for (const term of this.#completions(word)) offer(term, weight);
    }
    // A word that only documents of other kinds have is still a typo as far as tools go.
    if (word.length >= MIN_TYPO && [...concept.keys()].every((term) => !this.#toolsHave(term))) {
      for (const term of this.#sortedVocabulary()) if (withinOneEdit(word, term)) offer(term, TYPO_WEIGHT);
    }
    return concept;
  }

  #completions(prefix: string): string[] {
    const vocabulary = this.#sortedVocabulary();
    let lo = 0;
    let hi = vocabulary.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((vocabulary[mid] as string) < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < vocabulary.length && out.length < MAX_PREFIX_TERMS; i++) {
      const term = vocabulary[i] as string;
      if (!term.startsWith(prefix)) break;
      if (term !== prefix) out.push(term);
    }
    return out;
  }

  /**
   * How surely a query word names a server: the share of the tools it occurs in where it
   * is in the server name, squared. "gitlab" or "sentry" mean their server; "search"
   * (brave-search) or "map" (google-maps) are mostly ordinary words and count for little.
   */
  #serverShare(term: string): number {
    const posting = this.#postings.get(term);
    if (!posting) return 0;
    let inServer = 0;
    const others = this.#otherFrequency.get(term) ?? 0;
    if (others === 0 || others === posting.size) {
      for (const packed of posting.values()) if (occurrences(packed, Field.server) > 0) inServer++;
      return (inServer / posting.size) ** 2;
    }
    // Over tools only, when documents of other kinds have the word too: they must not sway it.
    for (const [slot, packed] of posting) {
      if ((this.#slots[slot] as Entry).kind === "tool" && occurrences(packed, Field.server) > 0) inServer++;
    }
    return (inServer / (posting.size - others)) ** 2;
  }

  /** Whether some tool has the term: what documents of other kinds add to the vocabulary must not change how a query reads for tools. */
  #toolsHave(term: string): boolean {
    return (this.#postings.get(term)?.size ?? 0) > (this.#otherFrequency.get(term) ?? 0);
  }

  #sortedVocabulary(): string[] {
    this.#vocabulary ??= [...this.#postings.keys()].sort();
    return this.#vocabulary;
  }

  /** Adds a document to the collection statistics (`sign` 1) or takes it out (-1): a tool to the tools', another kind to what they leave out. */
  #count(entry: Entry, sign: 1 | -1): void {
    if (entry.kind === "tool") {
      this.#tools += sign;
      entry.lengths.forEach((len, f) => (this.#lengthSums[f] = (this.#lengthSums[f] as number) + sign * len));
      return;
    }
    for (const term of entry.terms.keys()) {
      const others = (this.#otherFrequency.get(term) ?? 0) + sign;
      if (others === 0) this.#otherFrequency.delete(term);
      else this.#otherFrequency.set(term, others);
    }
  }

  #idf(term: string): number {
    const n = this.#tools;
    const df = (this.#postings.get(term)?.size ?? 0) - (this.#otherFrequency.get(term) ?? 0);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** BM25F: field-weighted, length-normalised occurrences, then one saturation for the tool. */
  #saturate(slot: number, packed: number): number {
    if (this.#statsAt[slot] !== this.#generation) this.#refreshStats(slot);
    const base = slot * FIELD_COUNT;
    let tf = 0;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const count = occurrences(packed, f);
      if (count > 0) tf += ((FIELD_WEIGHTS[f] as number) * count) / (this.#norms[base + f] as number);
    }
    return (tf * (K1 + 1)) / (tf + K1);
  }

  #refreshStats(slot: number): void {
    const entry = this.#slots[slot] as Entry;
    const n = this.#tools;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const b = FIELD_LENGTH_NORMS[f] as number;
      const average = (this.#lengthSums[f] as number) / n || 1;
      this.#norms[slot * FIELD_COUNT + f] = 1 - b + (b * (entry.lengths[f] as number)) / average;
    }
    // Words weigh by how telling they are: missing "get" costs less than missing "pull_request".
    this.#nameWeights[slot] = entry.nameTerms.reduce((sum, term) => sum + this.#idf(term), 0);
    this.#summaryWeights[slot] = entry.summaryTerms.reduce((sum, term) => sum + this.#idf(term), 0);
    this.#statsAt[slot] = this.#generation;
  }

  #ensureCapacity(slots: number): void {
    if (slots <= this.#statsAt.length) return;
    const capacity = Math.max(64, slots * 2);
    const grow = <T extends Float64Array | Int32Array>(old: T, make: (n: number) => T, width = 1): T => {
      const next = make(capacity * width);
      next.set(old);
      return next;
    };
    this.#norms = grow(this.#norms, (n) => new Float64Array(n), FIELD_COUNT);
    this.#nameWeights = grow(this.#nameWeights, (n) => new Float64Array(n));
    this.#summaryWeights = grow(this.#summaryWeights, (n) => new Float64Array(n));
    this.#statsAt = grow(this.#statsAt, (n) => new Int32Array(n));
  }
}

/**
 * Two words that the everyday vocabulary writes as one: "look up" (lookup: find, search),
 * "sign in" (signin: login), "set up" (setup: install).
 */
function joinedPhrase(raw: readonly string[], at: number): { length: number; related: ReadonlyMap<string, number> } | undefined {
  const joined = stem(`${raw[at]}${raw[at + 1]}`);
  const synonyms = SYNONYMS.get(joined);
  if (!synonyms) return undefined;
  return { length: 2, related: new Map([joined, ...synonyms].map((term) => [term, 1])) };
}

/** What a question asks for: "how far" a distance, "when" a time. */
const QUESTIONS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    "how many": ["count", "number", "total"],
    "how much": ["count", "amount", "total", "size"],
    "how far": ["distance"],
    "how big": ["size"],
    "how large": ["size"],
    "how long": ["duration", "time", "length"],
    "how high": ["height", "elevation"],
    "how tall": ["height", "elevation"],
    "how old": ["age", "date"],
    "how fast": ["speed", "performance"],
    "how slow": ["speed", "performance"],
    when: ["time", "date"],
    where: ["location", "place"],
    who: ["user", "author"],
  }),
);

/** "Which files are currently modified": what something is now, wherever "currently" stands, asks for its state. */
const NOW: readonly string[] = ["status", "state"];

/**
 * The things the questions of a query ask for ("how far apart are ..." -> distance).
 * "when", "where" and "who" ask only when they open the query: "notify me when a page changes" asks no time.
 */
export function askedAbout(raw: readonly string[]): Array<readonly string[]> {
  const out: Array<readonly string[]> = [];
  for (let i = 0; i < raw.length; i++) {
    const asked = raw[i] === "how" ? QUESTIONS.get(`how ${raw[i + 1]}`) : raw[i] === "currently" ? NOW : i === 0 ? QUESTIONS.get(raw[i] as string) : undefined;
    if (asked) out.push(asked);
  }
  return out;
}

/** How many of `words` (lower case) a text has as whole words. */
function sameWords(text: string, words: readonly string[]): number {
  let same = 0;
  for (const word of words) {
    for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
      if (!isAlphanumeric(text.charCodeAt(at - 1)) && !isAlphanumeric(text.charCodeAt(at + word.length))) {
        same++;
        break;
      }
    }
  }
  return same;
}

/** For a char code, NaN (out of the string) included. */
function isAlphanumeric(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90);
}

/** Keeps `top` the best `limit` hits, by score then id so that ties always break the same way. */
function insertTop(top: SearchHit[], hit: SearchHit, limit: number): void {
  const before = (a: SearchHit, b: SearchHit) => a.score > b.score || (a.score === b.score && a.id < b.id);
  let i = top.length;
  while (i > 0 && before(hit, top[i - 1] as SearchHit)) i--;
  if (i >= limit) return;
  top.splice(i, 0, hit);
  if (top.length > limit) top.pop();
}
