import { principalOfName } from "@codemux/core";
import { ConfigError, SettingsReader, isSettingsObject } from "@codemux/pool";

/** One rule of the config's `policies`: whom it is for, and what they may see and call. */
export interface PolicyRule {
  /** Named in `codemux policy check`, refusals and the audit log; `rules[<index>]` when the config gives none. */
  name: string;
  /**
   * Globs over principal ids (`token:ci-*`, `oauth:https://idp.example#*`); `local` only when written out. A plain
   * name without a kind or a wildcard is a token's (`ci` is `token:ci`); a wildcard without a kind (`*`) matches every kind.
   */
  principals: string[];
  /** Globs over the session's groups (a token's `groups`, an OAuth group claim). */
  groups: string[];
  /** Globs over the session's scopes. */
  scopes: string[];
  /** Globs over `server__tool` the rule shows; a glob without `__` or `*` is a whole server. */
  tools: string[];
  /** Globs over `server__tool` hidden even when `tools` shows them. */
  exclude: string[];
  /** Only tools whose annotations say `readOnlyHint: true` may be called; the others are seen but refused. */
  readOnly: boolean;
  /** Calls per minute for each principal under this rule, from every surface together. */
  callsPerMinute?: number;
  /** Background jobs each principal under this rule may have at once (running or waiting). */
  concurrentJobs?: number;
}

/** The config's `policies`: rules tried in order, the first that matches a session decides. */
export interface PolicyConfig {
  /** For a principal no rule matches: `deny` (sees no tools, the default) or `allow` (sees every tool). */
  default: "deny" | "allow";
  rules: PolicyRule[];
}

const POLICY_KEYS = ["default", "rules"] as const;
const RULE_KEYS = ["name", "principals", "groups", "scopes", "tools", "exclude", "readOnly", "callsPerMinute", "concurrentJobs"] as const;
/** What codemux calls the decisions no rule made. */
const RESERVED_NAMES = ["default", "local"];
/** Rules at most: each call of a principal without a cached grant is matched against them in order. */
const MAX_RULES = 1000;

/**
 * The config's top-level `policies`, checked; undefined when it has none (everyone sees everything,
 * as before policies). A mistake is a `ConfigError` naming the file and the field.
 *
 * @example
 * // { "policies": { "rules": [{ "name": "ci", "principals": ["token:ci"], "tools": ["github__*"], "readOnly": true, "callsPerMinute": 60 }] } }
 * const policies = policiesOf(JSON.parse(text), "codemux.json");
 */
export function policiesOf(config: unknown, file: string): PolicyConfig | undefined {
  const section = isSettingsObject(config) ? config.policies : undefined;
  if (section === undefined) return undefined;
  const read = new SettingsReader((where, message) => {
    throw new ConfigError(`Invalid config ${file}: ${where}: ${message}`, { file });
  });
  const policies = read.object(section, "policies", POLICY_KEYS);
  const fallback = policies.default ?? "deny";
  if (fallback !== "deny" && fallback !== "allow")
    read.fail("policies.default", `expected "deny" or "allow" (got ${JSON.stringify(fallback)?.slice(0, 40)}); it decides for principals no rule matches`);
  if (!Array.isArray(policies.rules)) return read.fail("policies.rules", 'expected a list of rules, e.g. [{ "principals": ["token:ci"], "tools": ["fs__*"] }]');
  if (policies.rules.length > MAX_RULES) read.fail("policies.rules", `expected at most ${MAX_RULES} rules (got ${policies.rules.length})`);
  const names = new Set<string>();
  const rules = policies.rules.map((value: unknown, index: number): PolicyRule => {
    const where = `policies.rules[${index}]`;
    const raw = read.object(value, where, RULE_KEYS);
    if (raw.name !== undefined && (typeof raw.name !== "string" || raw.name.length === 0 || raw.name.length > 100))
      read.fail(`${where}.name`, "expected a name of 1 to 100 characters");
    const name = (raw.name as string | undefined) ?? `rules[${index}]`;
    if (names.has(name)) read.fail(`${where}.name`, `"${name}" names two rules; give each its own name`);
    if (RESERVED_NAMES.includes(name))
      read.fail(`${where}.name`, `"${name}" is reserved: codemux names its own decisions so (no rule matched, the stdio owner)`);
    names.add(name);
    const list = (key: "principals" | "groups" | "scopes" | "tools" | "exclude") => (raw[key] === undefined ? [] : read.strings(raw[key], `${where}.${key}`));
    const rule: PolicyRule = {
      name,
      principals: list("principals").map((glob) => (/[*?]/.test(glob) ? glob : principalOfName(glob))),
      groups: list("groups"),
      scopes: list("scopes"),
      tools: list("tools"),
      exclude: list("exclude"),
      readOnly: raw.readOnly === undefined ? false : read.boolean(raw.readOnly, `${where}.readOnly`),
    };
    if (rule.principals.length + rule.groups.length + rule.scopes.length === 0)
      read.fail(where, `names nobody: give it "principals" (e.g. ["token:laptop"]), "groups" or "scopes"`);
    if (raw.tools === undefined) read.fail(`${where}.tools`, 'is required: the servers and tools the rule shows, e.g. ["fs", "github__get_*"] or ["*"]');
    if (raw.callsPerMinute !== undefined) rule.callsPerMinute = read.count(raw.callsPerMinute, `${where}.callsPerMinute`);
    if (raw.concurrentJobs !== undefined) rule.concurrentJobs = read.count(raw.concurrentJobs, `${where}.concurrentJobs`);
    return rule;
  });
  return { default: fallback as PolicyConfig["default"], rules };
}
