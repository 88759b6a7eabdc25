import type { ScanSeverity } from "./types";

/** A run of adjacent hidden characters of one kind, as UTF-16 offsets into the text. */
export interface HiddenRun {
  kind: HiddenKind;
  start: number;
  end: number;
  /** Code points in the run. */
  count: number;
  /** Left in the text: a joiner inside an emoji or a word of a script that needs it, one subdivision flag's tags. */
  legitimate: boolean;
}

export type HiddenKind = "tag" | "bidi-control" | "bidi-mark" | "zero-width" | "variation-selector" | "filler" | "escape" | "control" | "format" | "surrogate";

// One pass finds every candidate; the kind and the context decide the rest. Tab, line feed and carriage return are ordinary.
const CANDIDATE = /[\0-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\p{Cf}\p{Cs}\u115F\u1160\u17B4\u17B5\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;
const PICTOGRAPH = /\p{Extended_Pictographic}|[\u{1F3FB}-\u{1F3FF}\uFE0F]/u;
// Letters of scripts whose spelling uses zero-width joiners (Arabic, Persian, the Indic scripts): not Latin, Greek or Cyrillic.
const JOINING_LETTER = /[^\P{L}\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]|\p{M}/u;
const BLACK_FLAG = 0x1f3f4;

function kindOf(cp: number): HiddenKind {
  if (cp >= 0xe0000 && cp <= 0xe007f) return "tag";
  if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) return "bidi-control";
  if (cp === 0x200e || cp === 0x200f || cp === 0x061c) return "bidi-mark";
  if ((cp >= 0x200b && cp <= 0x200d) || (cp >= 0x2060 && cp <= 0x2064) || cp === 0xfeff || cp === 0x180e) return "zero-width";
  if ((cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef)) return "variation-selector";
  if (cp === 0x115f || cp === 0x1160 || cp === 0x17b4 || cp === 0x17b5 || cp === 0x3164 || cp === 0xffa0) return "filler";
  if (cp === 0x1b) return "escape";
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return "control";
  if (cp >= 0xd800 && cp <= 0xdfff) return "surrogate";
  return "format";
}

const charAt = (text: string, index: number) => (index >= 0 && index < text.length ? String.fromCodePoint(text.codePointAt(index)!) : "");
/** The code point that ends just before `index` (a surrogate pair read whole). */
function charBefore(text: string, index: number): string {
  if (index <= 0) return "";
  const low = text.charCodeAt(index - 1);
  return low >= 0xdc00 && low <= 0xdfff && index >= 2 ? charAt(text, index - 2) : text.charAt(index - 1);
}

/** Whether a run is part of ordinary writing, which stays: see `HiddenRun.legitimate`. */
function isLegitimate(text: string, run: HiddenRun): boolean {
  if (run.kind === "variation-selector") return run.count === 1 && text.codePointAt(run.start)! <= 0xfe0f && run.start > 0;
  if (run.kind === "tag") {
    // A subdivision flag: the black flag, a few tag letters, a cancel tag (England, Scotland, Wales).
    return run.count <= 7 && charBefore(text, run.start).codePointAt(0) === BLACK_FLAG && text.codePointAt(run.end - 2) === 0xe007f;
  }
  if (run.kind !== "zero-width" || run.count !== 1) return false;
  const before = charBefore(text, run.start);
  const after = charAt(text, run.end);
  const cp = text.charCodeAt(run.start);
  if (cp === 0x200d && PICTOGRAPH.test(before) && PICTOGRAPH.test(after)) return true;
  return (cp === 0x200c || cp === 0x200d) && JOINING_LETTER.test(before) && JOINING_LETTER.test(after);
}

/** Every run of hidden characters in `text`, in order; linear in its length. */
export function hiddenRuns(text: string): HiddenRun[] {
  const runs: HiddenRun[] = [];
  let current: HiddenRun | undefined;
  CANDIDATE.lastIndex = 0;
  for (let match = CANDIDATE.exec(text); match; match = CANDIDATE.exec(text)) {
    const kind = kindOf(match[0].codePointAt(0)!);
    const end = match.index + match[0].length;
    if (current && current.kind === kind && current.end === match.index) {
      current.end = end;
      current.count++;
      continue;
    }
    if (current) current.legitimate = isLegitimate(text, current);
    current = { kind, start: match.index, end, count: 1, legitimate: false };
    runs.push(current);
  }
  if (current) current.legitimate = isLegitimate(text, current);
  return runs;
}

/** The ASCII that tag characters stand for (U+E0020..U+E007E mirror U+0020..U+007E). */
export function decodeTags(text: string): string {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xe0020 && cp <= 0xe007e) out += String.fromCharCode(cp - 0xe0000);
  }
  return out;
}

/** The text with the runs that are not ordinary writing removed, and where each remaining code unit was. */
export interface VisibleText {
  text: string;
  /** `origin[i]` is the offset in the original text of the visible text's code unit `i`; absent when nothing was removed. */
  origin?: Int32Array;
}

export function visibleText(text: string, runs: readonly HiddenRun[] = hiddenRuns(text)): VisibleText {
  if (runs.every((run) => run.legitimate)) return { text };
  const parts: string[] = [];
  let from = 0;
  for (const run of runs) {
    if (run.legitimate) continue;
    parts.push(text.slice(from, run.start));
    from = run.end;
  }
  parts.push(text.slice(from));
  const visible = parts.join("");
  const origin = new Int32Array(visible.length);
  let v = 0;
  let o = 0;
  for (const run of runs) {
    if (run.legitimate) continue;
    for (; o < run.start; o++) origin[v++] = o;
    o = run.end;
  }
  for (; o < text.length; o++) origin[v++] = o;
  return { text: visible, origin };
}

/** Maps a span of the visible text back to offsets in the original text. */
export function originalSpan(visible: VisibleText, start: number, end: number): { start: number; end: number } {
  if (!visible.origin || visible.origin.length === 0) return { start, end };
  const at = (i: number) => visible.origin![Math.min(i, visible.origin!.length - 1)]!;
  return { start: at(start), end: end > start ? at(end - 1) + 1 : at(start) };
}

/**
 * The text with every hidden character removed: Unicode tag characters, zero-width characters, bidi
 * controls and marks, variation selectors past the first, invisible filler letters, control characters
 * other than tab and line breaks, and other format characters. Joiners inside an emoji or a word of a
 * script that spells with them, and subdivision flags, stay. What the model is shown goes through this,
 * whatever the scan policy; text with nothing hidden comes back as the same string.
 */
export function sanitizeModelText(text: string): string {
  CANDIDATE.lastIndex = 0;
  if (!CANDIDATE.test(text)) return text;
  return visibleText(text).text;
}

/** How a run of hidden characters is judged, with the sentence that says why; undefined for ordinary writing. */
export function hiddenSeverity(run: HiddenRun, context: { name: boolean; zeroWidthInField: number }): { severity: ScanSeverity; why: string } | undefined {
  if (run.legitimate) return undefined;
  const plural = run.count === 1 ? "" : "s";
  switch (run.kind) {
    case "tag":
      return { severity: "critical", why: `${run.count} Unicode tag character${plural}, which hide text from people but not from the model` };
    case "bidi-control":
      return {
        severity: "high",
        why: `${run.count} bidirectional control character${plural}, which make the text display in another order than the model reads it`,
      };
    case "bidi-mark":
      return { severity: context.name ? "high" : "warn", why: `${run.count} invisible bidirectional mark${plural}` };
    case "zero-width": {
      const many = run.count >= 4 || context.zeroWidthInField >= 8;
      return {
        severity: many || context.name ? "high" : "warn",
        why: many ? `${run.count} zero-width characters, enough to encode hidden data` : `${run.count} zero-width character${plural}`,
      };
    }
    case "variation-selector":
      return { severity: "high", why: `${run.count} variation selector${plural}, a known way to carry hidden bytes` };
    case "filler":
      return { severity: context.name ? "high" : "warn", why: `${run.count} invisible filler letter${plural}` };
    case "escape":
      return { severity: "high", why: "a terminal escape character, which can hide or rewrite what a terminal shows" };
    case "control":
      return { severity: "warn", why: `${run.count} control character${plural}` };
    case "surrogate":
      return { severity: "warn", why: "a broken UTF-16 surrogate" };
    case "format":
      return { severity: context.name ? "high" : "warn", why: `${run.count} invisible format character${plural}` };
  }
}
