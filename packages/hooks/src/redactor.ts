/** A named secret pattern; the match (or its `group`) is replaced by `[REDACTED:name]`. */
export interface SecretPattern {
  name: string;
  regex: RegExp;
  /** Mask only this capture group (keeps `password=` and masks what follows). */
  group?: number;
}

/**
 * Built-in patterns, written to run in linear time (bounded quantifiers, no nested repetition),
 * since the text they scan comes from tools.
 */
export const BUILT_IN_SECRET_PATTERNS: readonly SecretPattern[] = [
  { name: "private-key", regex: /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----[\s\S]{0,20000}?-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g },
  { name: "github-token", regex: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { name: "aws-access-key", regex: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { name: "bearer", regex: /\b(?:Bearer|Basic)\s+([A-Za-z0-9._~+/=-]{8,4096})/g, group: 1 },
  { name: "jwt", regex: /\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}/g },
  { name: "api-key", regex: /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,255}/g },
  { name: "slack-token", regex: /\bxox[abprs]-[A-Za-z0-9-]{10,255}/g },
  { name: "google-api-key", regex: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { name: "stripe-key", regex: /\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,255}/g },
  {
    name: "secret-assignment",
    regex: /\b(?:password|passwd|pwd|secret|client[_-]?secret|api[_-]?key|access[_-]?token|auth[_-]?token)("?\s{0,3}[:=]\s{0,3}"?)([^\s"',;&]{4,512})/gi,
    group: 2,
  },
];

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

/** Masks secrets in text and in JSON values, within a scan bound. */
export class Redactor {
  readonly patterns: readonly SecretPattern[];
  readonly maxScanChars: number;

  constructor(options: RedactorOptions = {}) {
    const builtIns = options.builtIns ?? true;
    const chosen = builtIns === true ? BUILT_IN_SECRET_PATTERNS : builtIns === false ? [] : BUILT_IN_SECRET_PATTERNS.filter((p) => builtIns.includes(p.name));
    this.patterns = [...chosen, ...(options.patterns ?? [])].map((p) => ({
      ...p,
      regex: p.regex.global ? p.regex : new RegExp(p.regex.source, `${p.regex.flags}g`),
    }));
    this.maxScanChars = options.maxScanChars ?? DEFAULT_MAX_SCAN_CHARS;
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

  /** A JSON value with its strings masked (and values under secret-looking keys when `keys`); bounded in depth and total characters. */
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
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(node as Record<string, unknown>)) {
        if (options.keys && SECRET_KEY.test(key) && item !== null && item !== undefined && item !== "") {
          count++;
          out[key] = "[REDACTED]";
        } else out[key] = walk(item, depth + 1);
      }
      return out;
    };
    const value = walk(input, 0);
    return { value, count };
  }
}
