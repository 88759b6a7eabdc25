import { SECRET_PATTERNS, type SecretPattern } from "@codemux/core";

/** The built-in patterns: codemux's one list of what a secret looks like (SECRET_PATTERNS of @codemux/core), each linear in time. */
export const BUILT_IN_SECRET_PATTERNS: readonly SecretPattern[] = SECRET_PATTERNS;

/** Argument names whose values are secrets whatever they look like (audit lines mask them whole). */
const SECRET_KEY = /passw|secret|token|api[-_]?key|apikey|authorization|credential|private[-_]?key|cookie|session/i;

export interface RedactorOptions {
  /** Built-in patterns to use: all (default), none (`false`), or these names. */
  builtIns?: boolean | readonly string[];
  patterns?: readonly SecretPattern[];
  /** Characters of one text scanned at most; the rest is withheld rather than passed unscanned. */
  maxScanChars?: number;
}

export const DEFAULT_MAX_SCAN_CHARS = 2_000_000;

/** How a reader may join text parts (nothing between, a newline as the wrappers do, a space): a secret split across parts is looked for in each. */
const JOINS = ["", "\n", " "];

/** Content types whose `data` is base64 media. */
const MEDIA: ReadonlySet<string> = new Set(["image", "audio"]);

const MARKER = /^\[REDACTED:[^\]]{1,100}\]$/;

/** Where one secret lies in a text: [start, end) of the part to mask. */
interface Span {
  start: number;
  end: number;
  name: string;
}

/** What masks the records codemux keeps of calls (audit lines, the jobs journal): a `Redactor`, or one that picks it at each call. */
export type RecordRedactor = Pick<Redactor, "text" | "value">;

/** Masks secrets in text and in JSON values, within a scan bound. */
export class Redactor {
  readonly patterns: readonly SecretPattern[];
  readonly maxScanChars: number;
  /** The same patterns with match indices, to find where a secret lies across joined parts. */
  readonly #located: ReadonlyArray<{ name: string; regex: RegExp; group: number | undefined }>;

  constructor(options: RedactorOptions = {}) {
    const builtIns = options.builtIns ?? true;
    const chosen = builtIns === true ? BUILT_IN_SECRET_PATTERNS : builtIns === false ? [] : BUILT_IN_SECRET_PATTERNS.filter((p) => builtIns.includes(p.name));
    this.patterns = [...chosen, ...(options.patterns ?? [])].map((p) => ({
      ...p,
      regex: p.regex.global ? p.regex : new RegExp(p.regex.source, `${p.regex.flags}g`),
    }));
    this.#located = this.patterns.map((p) => ({
      name: p.name,
      regex: new RegExp(p.regex.source, p.regex.flags.includes("d") ? p.regex.flags : `${p.regex.flags}d`),
      group: p.group,
    }));
    this.maxScanChars = options.maxScanChars ?? DEFAULT_MAX_SCAN_CHARS;
  }

  /**
   * Texts that a reader may join (the text parts of one result): each masked alone, then masked where a
   * secret appears only once they are joined, whichever way (`JOINS`); the joined scan is bounded like one text.
   */
  texts(inputs: readonly string[]): { texts: string[]; count: number } {
    let count = 0;
    let texts = inputs.map((input) => {
      const masked = this.text(input);
      count += masked.count;
      return masked.text;
    });
    if (texts.length < 2) return { texts, count };
    for (const join of JOINS) {
      const spans = this.#spans(texts.join(join).slice(0, this.maxScanChars));
      if (spans.length === 0) continue;
      count += spans.length;
      texts = maskSpans(texts, join.length, spans);
    }
    return { texts, count };
  }

  /** Every secret's span in `text`, overlapping ones merged, in order. */
  #spans(text: string): Span[] {
    const spans: Span[] = [];
    for (const { name, regex, group } of this.#located) {
      regex.lastIndex = 0;
      for (const match of text.matchAll(regex)) {
        const whole: [number, number] = [match.index, match.index + match[0].length];
        const [start, end] = (group !== undefined ? match.indices?.[group] : undefined) ?? whole;
        // A part masked alone already holds markers: a pattern that takes a marker for a value is not a new secret.
        if (end > start && !MARKER.test(text.slice(start, end))) spans.push({ start, end, name });
      }
    }
    spans.sort((a, b) => a.start - b.start);
    const merged: Span[] = [];
    for (const span of spans) {
      const last = merged[merged.length - 1];
      if (last && span.start < last.end) last.end = Math.max(last.end, span.end);
      else merged.push({ ...span });
    }
    return merged;
  }

  /** The text with every secret masked, and how many were. */
  text(input: string): { text: string; count: number } {
    let text = input;
    let tail = "";
    if (text.length > this.maxScanChars) {
      tail = `\n[codemux redact: ${text.length - this.maxScanChars} characters past the first ${this.maxScanChars} were not scanned for secrets and are withheld]`;
      text = text.slice(0, this.maxScanChars);
    }
    let count = 0;
    for (const pattern of this.patterns) {
      pattern.regex.lastIndex = 0;
      text = text.replace(pattern.regex, (...match: unknown[]) => {
        count++;
        const whole = match[0] as string;
        if (pattern.group === undefined) return `[REDACTED:${pattern.name}]`;
        const part = match[pattern.group];
        if (typeof part !== "string" || part === "") return `[REDACTED:${pattern.name}]`;
        const at = whole.lastIndexOf(part);
        return `${whole.slice(0, at)}[REDACTED:${pattern.name}]${whole.slice(at + part.length)}`;
      });
    }
    return { text: text + tail, count: count + (tail ? 1 : 0) };
  }

  /** A JSON value with its strings masked (and values under secret-looking keys when `keys`), an image's or audio's `data` left; bounded in depth and total characters. */
  value(input: unknown, options: { keys?: boolean } = {}): { value: unknown; count: number } {
    let count = 0;
    let budget = this.maxScanChars;
    const walk = (node: unknown, depth: number): unknown => {
      if (typeof node === "string") {
        if (budget <= 0) {
          count++;
          return "[REDACTED:unscanned]";
        }
        budget -= node.length;
        const masked = this.text(node);
        count += masked.count;
        return masked.text;
      }
      if (node === null || typeof node !== "object") return node;
      if (depth > 32) {
        count++;
        return "[REDACTED:too-deep]";
      }
      if (Array.isArray(node)) return node.map((item) => walk(item, depth + 1));
      const entries: Array<[string, unknown]> = [];
      const keys = new Set<string>();
      // An image's or audio's base64 data is no text a reader sees, and masking a chance match would break it.
      const media = MEDIA.has((node as { type?: unknown }).type as string);
      for (const [key, item] of Object.entries(node as Record<string, unknown>)) {
        if (media && key === "data" && typeof item === "string") {
          entries.push([key, item]);
          continue;
        }
        // A key is text a reader sees as much as a value: a secret used as a key is masked too (a number keeps two masked keys apart).
        let shown = walk(key, depth + 1) as string;
        for (let n = 2; shown !== key && keys.has(shown); n++) shown = `${shown.replace(/#\d+$/, "")}#${n}`;
        keys.add(shown);
        if (options.keys && SECRET_KEY.test(key) && item !== null && item !== undefined && item !== "") {
          count++;
          entries.push([shown, "[REDACTED]"]);
        } else entries.push([shown, walk(item, depth + 1)]);
      }
      // fromEntries defines each key as an own property: a "__proto__" key stays data, never the prototype.
      return Object.fromEntries(entries);
    };
    const value = walk(input, 0);
    return { value, count };
  }
}

/** The texts with each span (found in the texts joined by `joinLength` characters) masked in every text it touches. */
function maskSpans(texts: string[], joinLength: number, spans: readonly Span[]): string[] {
  const out: string[] = [];
  let offset = 0;
  let next = 0;
  for (const text of texts) {
    const end = offset + text.length;
    let built = "";
    let at = 0;
    // Spans are ordered and apart: those before this text are done, one may run on into the next text.
    while (next < spans.length && (spans[next] as Span).start < end) {
      const span = spans[next] as Span;
      const from = Math.max(span.start, offset) - offset;
      const to = Math.min(span.end, end) - offset;
      if (to > from) {
        built += `${text.slice(at, from)}[REDACTED:${span.name}]`;
        at = to;
      }
      if (span.end > end) break;
      next++;
    }
    out.push(built + text.slice(at));
    offset = end + joinLength;
  }
  return out;
}
