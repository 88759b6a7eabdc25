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
 * Masks what looks like a secret in free text: URLs (as `maskUrl`), `apikey=...`-style pairs,
 * `--token ...` flags and `Bearer ...` credentials. Every message, status and log line of the pool goes through it.
 */
export function redactSecrets(text: string): string {
  if (!text) return text;
  return text
    .replace(URL_IN_TEXT, (url) => {
      const trailing = /[.,;:)\]}]+$/.exec(url)?.[0] ?? "";
      return maskUrl(url.slice(0, url.length - trailing.length)) + trailing;
    })
    .replace(PARAM_IN_TEXT, (match, sep: string, name: string, value: string) => (value.startsWith(MASK) ? match : `${sep}${name}=${MASK}`))
    .replace(FLAG_IN_TEXT, (match, flag: string, sep: string, value: string) => (value.startsWith(MASK) ? match : `${flag}${sep}${MASK}`))
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${MASK}`)
    .replace(KNOWN_TOKEN, MASK);
}

/** `${VAR}` alone: a reference to the environment, which names a secret but holds none. */
const REFERENCE_ONLY = /^\$\{[^}]{1,200}\}$/;
// Client configs are shallow; past this depth a value is masked whole rather than walked.
const MAX_CONFIG_DEPTH = 64;

/**
 * A copy of an MCP client config (any JSON) that is safe to print: every value under `env` and
 * `headers`, and every value of a key named like a secret (`clientSecret`, `apiKey`, `token`), becomes
 * `***` unless it is only a `${VAR}` reference; every other string is masked as `redactSecrets` masks text.
 * @example redactConfig({ mcpServers: { gh: { env: { GITHUB_TOKEN: "ghp_x" } } } }) // { mcpServers: { gh: { env: { GITHUB_TOKEN: "***" } } } }
 */
export function redactConfig(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactSecrets(value);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_CONFIG_DEPTH) return MASK;
  if (Array.isArray(value)) return value.map((item) => redactConfig(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (key === "env" || key === "headers") return [key, maskValues(inner)];
      if (isSecretParameter(key) && typeof inner !== "object") return [key, maskValue(inner)];
      return [key, redactConfig(inner, depth + 1)];
    }),
  );
}

function maskValues(values: unknown): unknown {
  if (typeof values !== "object" || values === null || Array.isArray(values)) return maskValue(values);
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, maskValue(value)]));
}

function maskValue(value: unknown): unknown {
  return typeof value === "string" && REFERENCE_ONLY.test(value) ? value : MASK;
}
