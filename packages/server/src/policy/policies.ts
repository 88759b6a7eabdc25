import { LOCAL_PRINCIPAL, SEPARATOR, globMatcher, type SessionInfo } from "@codemux/core";
import type { PolicyConfig, PolicyRule } from "./config";

/** Who asks, as a policy sees them. */
export type PolicySubject = Pick<SessionInfo, "principal" | "groups" | "scopes">;

/** What one principal may see and call: the rule that matched it (or the default), ready to answer per tool. */
export interface Grant {
  /** The deciding rule's name; `default` for a principal no rule matches, `local` for the owner no rule names. */
  readonly rule: string;
  /** Why this rule decides, in words (`policy check` prints it). */
  readonly because: string;
  /** Every tool is seen: views need no filter. */
  readonly all: boolean;
  readonly readOnly: boolean;
  readonly callsPerMinute: number | undefined;
  readonly concurrentJobs: number | undefined;
  /** Whether the tool `server__tool` exists for this principal. */
  sees(qualifiedName: string): boolean;
  /** Whether the rule shows a whole server (its resources and prompts, and the server while it is down). */
  seesServer(server: string): boolean;
}

/** Tool names whose answer a grant remembers, at most (then it starts again): the catalog's size in practice. */
const MAX_REMEMBERED = 10_000;
/** Grants remembered by principal and claims, at most. */
const MAX_GRANTS = 1_000;

/**
 * The config's policies, compiled: the grant of a session is its first matching rule's (by principal glob,
 * group or scope), else the default's. The stdio owner (`local`) is unrestricted unless a rule names
 * `local` itself: a `*` glob is meant for the gateway's users, not for the one who runs it.
 */
export class Policies {
  readonly config: PolicyConfig;
  readonly #rules: Array<{ rule: PolicyRule; principal: (id: string) => boolean; group: (name: string) => boolean; scope: (name: string) => boolean }>;
  readonly #grants = new Map<string, Grant>();

  constructor(config: PolicyConfig) {
    this.config = config;
    this.#rules = config.rules.map((rule) => ({
      rule,
      principal: globMatcher(rule.principals, { wholeServer: false }),
      group: globMatcher(rule.groups, { wholeServer: false }),
      scope: globMatcher(rule.scopes, { wholeServer: false }),
    }));
  }

  /** The grant of `subject`, made once per principal and claims. */
  grant(subject: PolicySubject): Grant {
    const key = `${subject.principal}\u0000${subject.groups?.join("\u0001") ?? ""}\u0000${subject.scopes?.join("\u0001") ?? ""}`;
    let grant = this.#grants.get(key);
    if (grant === undefined) {
      if (this.#grants.size >= MAX_GRANTS) this.#grants.clear();
      grant = this.#match(subject);
      this.#grants.set(key, grant);
    }
    return grant;
  }

  #match(subject: PolicySubject): Grant {
    const local = subject.principal === LOCAL_PRINCIPAL;
    for (const { rule, principal, group, scope } of this.#rules) {
      const byPrincipal = local ? rule.principals.includes(LOCAL_PRINCIPAL) : principal(subject.principal);
      if (byPrincipal) return new RuleGrant(rule, `its principal "${subject.principal}" matches ${listed(rule.principals)}`);
      if (local) continue;
      const byGroup = subject.groups?.find(group);
      if (byGroup !== undefined) return new RuleGrant(rule, `its group "${byGroup}" matches ${listed(rule.groups)}`);
      const byScope = subject.scopes?.find(scope);
      if (byScope !== undefined) return new RuleGrant(rule, `its scope "${byScope}" matches ${listed(rule.scopes)}`);
    }
    if (local) return FIXED.local;
    return this.config.default === "allow" ? FIXED.allow : FIXED.deny;
  }
}

/** The grant of one rule; remembers its answers per tool name. */
class RuleGrant implements Grant {
  readonly rule: string;
  readonly all = false;
  readonly readOnly: boolean;
  readonly callsPerMinute: number | undefined;
  readonly concurrentJobs: number | undefined;
  readonly #shows: (name: string) => boolean;
  readonly #hides: (name: string) => boolean;
  readonly #seen = new Map<string, boolean>();

  constructor(
    rule: PolicyRule,
    readonly because: string,
  ) {
    this.rule = rule.name;
    this.readOnly = rule.readOnly;
    this.callsPerMinute = rule.callsPerMinute;
    this.concurrentJobs = rule.concurrentJobs;
    this.#shows = globMatcher(rule.tools);
    this.#hides = globMatcher(rule.exclude);
  }

  sees(qualifiedName: string): boolean {
    let seen = this.#seen.get(qualifiedName);
    if (seen === undefined) {
      if (this.#seen.size >= MAX_REMEMBERED) this.#seen.clear();
      seen = this.#shows(qualifiedName) && !this.#hides(qualifiedName);
      this.#seen.set(qualifiedName, seen);
    }
    return seen;
  }

  seesServer(server: string): boolean {
    // `fs`, `fs__*` and `*` show the server itself; `fs__read_*` shows some of its tools only.
    return this.sees(`${server}${SEPARATOR}`);
  }
}

/** A grant that shows everything or nothing. */
function fixedGrant(rule: string, because: string, all: boolean): Grant {
  return {
    rule,
    because,
    all,
    readOnly: false,
    callsPerMinute: undefined,
    concurrentJobs: undefined,
    sees: () => all,
    seesServer: () => all,
  };
}

const FIXED = {
  local: fixedGrant("local", 'it is the owner over stdio and no rule names "local"', true),
  allow: fixedGrant("default", 'no rule matches it and policies.default is "allow"', true),
  deny: fixedGrant("default", 'no rule matches it and policies.default is "deny"', false),
};

function listed(globs: readonly string[]): string {
  return globs.map((g) => `"${g}"`).join(", ");
}
