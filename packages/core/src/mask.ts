/** Query parameter names whose values are secrets (matched case-insensitively on the whole name or a part of it). */
const SECRET_PARAM = /^(?:key|sig|code|auth|pass|pwd|jwt)$|token|secret|passw|api[-_]?key|signature|credential|authorization|session|private/i;
const MASK = "***";
const URL_IN_TEXT = /\b(?:https?|wss?):\/\/[^\s"'<>`]+/gi;
// `apikey=...` outside a URL (a query string alone, a log of form fields).
const PARAM_IN_TEXT =
  /([?&;]|\b)((?:[A-Za-z0-9]+[-_])*(?:api[-_]?key|apikey|access[-_]?token|refresh[-_]?token|id[-_]?token|token|secret|password|passwd|sig|signature)(?:[-_][A-Za-z0-9]+)*)=([^&\s"'<>;]+)/gi;
// `--token=x`, `--api-key x` in a command line.
const FLAG_IN_TEXT = /(--?(?:[A-Za-z0-9]+-)*(?:api-?key|apikey|token|secret|password|passwd|access-token|auth)(?:-[A-Za-z0-9]+)*)(=|\s+)(?!-)(\S+)/gi;
/**
 * Masks secrets in what downstream servers send before codemux passes it to a client or keeps it
 * (log lines, prompts, completions, questions, progress, errors): the redact plugin's patterns while it
 * is on (`@codemux/hooks`), nothing without it. Both methods are bounded and linear in their input.
 */
export interface SecretMask {
  text(text: string): string;
  /** A JSON value with its strings masked (keys too); an image's or audio's base64 `data` is left as it is. */
  value<T>(value: T): T;
}

/** The mask of a codemux without the redact plugin: downstream text passes as it came. */
export const NO_MASK: SecretMask = { text: (text) => text, value: (value) => value };

/** A named secret pattern; the match (or its `group`) is replaced by `[REDACTED:name]`. */
export interface SecretPattern {
  name: string;
  regex: RegExp;
  /** Mask only this capture group, which ends the match (keeps `password=` and masks what follows). */
  group?: number;
}

/**
 * What a secret looks like, wherever it appears (log lines, errors, tool results): the one list codemux
 * masks by, written to run in linear time (bounded quantifiers, no nested repetition),
 * since the text they scan comes from tools.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { name: "private-key", regex: /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----[\s\S]{0,20000}?-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g },
  { name: "github-token", regex: /\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})\b/g },
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
const BEARER = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}/g;

export function isSecretParameter(name: string): boolean {
  return SECRET_PARAM.test(name);
}

/**
 * A URL safe to print: credentials (`user:pass@`) and secret query parameters (`apikey`, `token`,
 * `sig`, ...) become `***`. Text that is not a URL is masked as well as can be.
 * @example maskUrl("https://u:p@x.dev/mcp?apikey=s3cr3t&v=1") // "https://***:***@x.dev/mcp?apikey=***&v=1"
 */
export function maskUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return String(url)
      .replace(PARAM_IN_TEXT, (_m, sep: string, name: string) => `${sep}${name}=${MASK}`)
      .replace(/\/\/[^/@\s]+@/, `//${MASK}@`);
  }
  if (parsed.username) parsed.username = MASK;
  if (parsed.password) parsed.password = MASK;
  let changed = false;
  const params = [...parsed.searchParams.entries()].map(([name, value]): [string, string] => {
    if (!value || !isSecretParameter(name)) return [name, value];
    changed = true;
    return [name, MASK];
  });
  if (changed) {
    // URLSearchParams would percent-encode "***"; build the query by hand to keep it readable.
    parsed.search = params
      .map(([name, value]) => (value === MASK ? `${encodeURIComponent(name)}=${MASK}` : `${encodeURIComponent(name)}=${encodeURIComponent(value)}`))
      .join("&");
  }
  return parsed.toString().replace(/%2A%2A%2A/g, MASK);
}

/**
 * The one masking rule of codemux for what it writes itself: every log line, status and error. Masks
 * URLs' secrets (as `maskUrl`), `apikey=...`-style pairs, `--token ...` flags, `Bearer ...`
 * credentials, and whatever has the shape of a secret (SECRET_PATTERNS: keys, tokens, JWTs).
 */
export function redactSecrets(text: string): string {
  if (!text) return text;
  const masked = text
    .replace(URL_IN_TEXT, (url) => {
      const trailing = /[.,;:)\]}]+$/.exec(url)?.[0] ?? "";
      return maskUrl(url.slice(0, url.length - trailing.length)) + trailing;
    })
    .replace(PARAM_IN_TEXT, (match, ...[sep, name, value]: string[]) => (value?.startsWith(MASK) ? match : `${sep}${name}=${MASK}`))
    .replace(FLAG_IN_TEXT, (match, ...[flag, sep, value]: string[]) => (value?.startsWith(MASK) ? match : `${flag}${sep}${MASK}`))
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`);
  return maskShapes(masked);
}

/** Each of SECRET_PATTERNS over the text: a whole match is masked, or, for a pattern with a `group`, the group (which ends the match). */
function maskShapes(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern.regex, (match: string, ...groups: unknown[]) => {
      const secret = pattern.group === undefined ? undefined : groups[pattern.group - 1];
      if (typeof secret === "string" && secret.startsWith(MASK)) return match;
      return typeof secret === "string" && match.endsWith(secret) ? `${match.slice(0, match.length - secret.length)}${MASK}` : MASK;
    });
  }
  return out;
}
