/** Query parameter names whose values are secrets (matched case-insensitively on the whole name or a part of it). */
const SECRET_PARAM = /^(?:key|sig|code|auth|pass|pwd|jwt)$|token|secret|passw|api[-_]?key|signature|credential|authorization|session|private/i;
const MASK = "***";
const URL_IN_TEXT = /\b(?:https?|wss?):\/\/[^\s"'<>`]+/gi;
// `apikey=...` outside a URL (a query string alone, a log of form fields).
const PARAM_IN_TEXT =
  /([?&;]|\b)((?:[A-Za-z0-9]+[-_])*(?:api[-_]?key|apikey|access[-_]?token|refresh[-_]?token|id[-_]?token|token|secret|password|passwd|sig|signature)(?:[-_][A-Za-z0-9]+)*)=([^&\s"'<>;]+)/gi;
// `--token=x`, `--api-key x` in a command line.
const FLAG_IN_TEXT = /(--?(?:[A-Za-z0-9]+-)*(?:api-?key|apikey|token|secret|password|passwd|access-token|auth)(?:-[A-Za-z0-9]+)*)(=|\s+)(?!-)(\S+)/gi;
// Tokens recognizable by their shape wherever they appear (GitHub, OpenAI-style, Slack, AWS access keys).
const KNOWN_TOKEN = /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b/g;
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
 * The one masking rule of codemux. Masks what looks like a secret in free text: URLs (as `maskUrl`), `apikey=...`-style pairs,
 * `--token ...` flags and `Bearer ...` credentials. Every message, status and log line of the pool goes through it.
 */
export function redactSecrets(text: string): string {
  if (!text) return text;
  return text
    .replace(URL_IN_TEXT, (url) => {
      const trailing = /[.,;:)\]}]+$/.exec(url)?.[0] ?? "";
      return maskUrl(url.slice(0, url.length - trailing.length)) + trailing;
    })
    .replace(PARAM_IN_TEXT, (match, ...[sep, name, value]: string[]) => (value?.startsWith(MASK) ? match : `${sep}${name}=${MASK}`))
    .replace(FLAG_IN_TEXT, (match, ...[flag, sep, value]: string[]) => (value?.startsWith(MASK) ? match : `${flag}${sep}${MASK}`))
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`)
    .replace(KNOWN_TOKEN, MASK);
}
