import type { ScanRule, ScanSeverity } from "./types";

/** A finding as a rule reports it: offsets into the scan text. */
export interface RawFinding {
  rule: ScanRule;
  severity: ScanSeverity;
  start: number;
  end: number;
  message: string;
}

/** Where a rule reports a finding. */
export type Emit = (finding: RawFinding) => void;

export interface Match {
  start: number;
  end: number;
  groups: ReadonlyArray<string | undefined>;
}

/** One field's visible text in the scan text, and what a rule may need to know of it. */
export interface Segment {
  start: number;
  end: number;
  /** An identifier (a tool's or a property's name): `_` and `-` read as spaces. */
  name: boolean;
  /** Parameter names the text may send data into: the tool's own (all the server's for server-wide text), lowercase. */
  params: ReadonlySet<string>;
  /** The property whose description this is: "put it here" means into it. */
  ownParam: string | undefined;
}

/** Matches are at most this far apart (in characters, within one clause) to count as said together. */
export const NEAR = 240;

// A sentence ends at . ! ? followed by a space, and at a line break: "sentry.io" and "e.g." mid-sentence do not end one.
const CLAUSE_END = /[.!?](?=\s)|\n/g;
/** Between two fields: a line break ends a clause, and no pattern crosses one (see phrases.ts). */
const BETWEEN = "\n\n";

/**
 * The visible text of every field of one server, one after another, as the rules read it: each pattern
 * runs once over all of it (a few calls instead of one per field and pattern), its matches kept, and
 * an offset maps back to its field and clause. Every pattern is linear (see phrases.ts).
 */
export class ScanText {
  private readonly parts: string[] = [];
  private readonly rawParts: string[] = [];
  private length = 0;
  readonly segments: Segment[] = [];
  private clauseEnds: number[] = [];
  private readonly cache = { text: new Map<RegExp, MatchList>(), raw: new Map<RegExp, MatchList>() };
  private joined: { text: string; raw: string } | undefined;

  /** Adds a field's visible text; returns its segment. */
  add(text: string, segment: Omit<Segment, "start" | "end">): Segment {
    const placed: Segment = { name: segment.name, params: segment.params, ownParam: segment.ownParam, start: this.length, end: this.length + text.length };
    this.rawParts.push(text, BETWEEN);
    this.parts.push(segment.name ? text.replace(/[_-]/g, " ") : text, BETWEEN);
    this.length += text.length + BETWEEN.length;
    this.segments.push(placed);
    return placed;
  }

  /** The fields joined, and the clause ends found, once all are added. */
  private joinedText() {
    if (!this.joined) {
      this.joined = { text: this.parts.join(""), raw: this.rawParts.join("") };
      CLAUSE_END.lastIndex = 0;
      for (let m = CLAUSE_END.exec(this.joined.text); m; m = CLAUSE_END.exec(this.joined.text)) this.clauseEnds.push(m.index);
    }
    return this.joined;
  }

  /** All fields' text, a name's `_` and `-` read as spaces. */
  get text(): string {
    return this.joinedText().text;
  }

  /** The same with names as they are (same offsets). */
  get raw(): string {
    return this.joinedText().raw;
  }

  /** Every match of a global pattern over `text` (or `raw`), in order; kept for the next rule that asks. */
  all(pattern: RegExp, over: "text" | "raw" = "text"): MatchList {
    let found = this.cache[over].get(pattern);
    if (!found) {
      found = new MatchList(pattern, this.joinedText()[over]);
      this.cache[over].set(pattern, found);
    }
    return found;
  }

  slice(match: { start: number; end: number }): string {
    return this.text.slice(match.start, match.end);
  }

  /** The clause an offset is in. */
  clauseOf(offset: number): number {
    this.joinedText();
    return firstAtLeast(this.clauseEnds, offset, (end) => end);
  }

  /** The index in `segments` of the field an offset is in. */
  segmentIndexAt(offset: number): number {
    return Math.min(
      firstAtLeast(this.segments, offset, (s) => s.end),
      this.segments.length - 1,
    );
  }

  segmentAt(offset: number): Segment {
    return this.segments[this.segmentIndexAt(offset)]!;
  }

  /** The first match of `pattern` in the same clause as `at` and within NEAR characters of it, if any. */
  near(at: Match, pattern: RegExp, accept: (m: Match) => boolean = () => true): Match | undefined {
    const clause = this.clauseOf(at.start);
    const matches = this.all(pattern);
    for (let i = firstAtLeast(matches.ends, at.start - NEAR, (end) => end); i < matches.length && matches.starts[i]! <= at.end + NEAR; i++) {
      if (this.clauseOf(matches.starts[i]!) !== clause) continue;
      const m = matches.get(i);
      if (accept(m)) return m;
    }
    return undefined;
  }
}

/**
 * A pattern's matches, compact: hostile text can hold a million of them (`it it it ...`), so offsets
 * are kept in plain number arrays and the capture groups only for patterns that have some.
 */
export class MatchList implements Iterable<Match> {
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  private readonly groups: Array<ReadonlyArray<string | undefined>> = [];

  constructor(pattern: RegExp, text: string) {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
      this.starts.push(m.index);
      this.ends.push(m.index + m[0].length);
      if (m.length > 1) this.groups.push(m.slice(1));
      if (m[0].length === 0) pattern.lastIndex++;
    }
  }

  get length(): number {
    return this.starts.length;
  }

  get(i: number): Match {
    return { start: this.starts[i]!, end: this.ends[i]!, groups: this.groups[i] ?? [] };
  }

  *[Symbol.iterator](): Iterator<Match> {
    for (let i = 0; i < this.starts.length; i++) yield this.get(i);
  }
}

/** The index of the first element whose key is at least `value` (the elements sorted by key). */
function firstAtLeast<T>(sorted: readonly T[], value: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(sorted[mid]!) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A span from the first to the last of some matches. */
export function spanning(...matches: Array<Match | undefined>): { start: number; end: number } {
  const present = matches.filter((m): m is Match => m !== undefined);
  return { start: Math.min(...present.map((m) => m.start)), end: Math.max(...present.map((m) => m.end)) };
}

const HIDDEN_OR_SPACE = /[\0-\x1F\x7F-\x9F\p{Cf}\p{Cs}\uFE00-\uFE0F\u{E0100}-\u{E01EF}]|\s+/gu;

/** Text quoted in a message: whitespace as one space, hidden characters written as `\u{...}`, at most `max` characters. */
export function quote(text: string, max = 80): string {
  const cut = text.length > max * 2 ? text.slice(0, max * 2) : text;
  const shown = cut.replace(HIDDEN_OR_SPACE, (m) => (/^\s+$/u.test(m) ? " " : `\\u{${m.codePointAt(0)!.toString(16).toUpperCase()}}`)).trim();
  return `"${shown.length > max ? `${shown.slice(0, max - 1)}…` : shown}"`;
}

/**
 * Keeps one finding per clause and rule, the worst: a clause that says "send" twice is one finding.
 * Returns whether the finding is kept.
 */
export class PerClause {
  private readonly worst = new Map<number, number>();
  private static readonly rank = { info: 0, warn: 1, high: 2, critical: 3 } as const;

  constructor(private readonly text: ScanText) {}

  keep(at: number, severity: ScanSeverity): boolean {
    const clause = this.text.clauseOf(at);
    const before = this.worst.get(clause);
    if (before !== undefined && before >= PerClause.rank[severity]) return false;
    this.worst.set(clause, PerClause.rank[severity]);
    return true;
  }
}
