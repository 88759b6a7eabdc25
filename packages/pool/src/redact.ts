import { isSecretParameter, redactSecrets } from "@codemux/core";

/** What a masked value looks like, as `redactSecrets` of @codemux/core writes it. */
const MASK = "***";
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
