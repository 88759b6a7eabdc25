import { globMatcher } from "@codemux/core";
import type { PolicyConfig } from "./config";
import { Policies, type PolicySubject } from "./policies";

/** What the policies decide for one principal and one `server__tool`, and why. */
export interface PolicyDecision {
  /** The deciding rule (`default`, `local`, or a rule's name); undefined without policies. */
  rule: string | undefined;
  /** Whether the tool exists for the principal at all (else it answers as unknown). */
  visible: boolean;
  /** The rule lets it call read-only tools only. */
  readOnly: boolean;
  callsPerMinute?: number;
  concurrentJobs?: number;
  /** The decision in sentences, one a line. */
  text: string;
}

/**
 * Explains the decision for `subject` calling `name` under `config` (`codemux policy check`): which rule
 * matched and why, whether the tool is seen, and what limits hold. Needs no server: read-only tools are
 * named by their annotations, which only their server knows, so the answer says what it depends on.
 *
 * @example
 * explainPolicy(policiesOf(config, "codemux.json"), { principal: "token:ci" }, "github__create_issue").text
 */
export function explainPolicy(config: PolicyConfig | undefined, subject: PolicySubject, name: string): PolicyDecision {
  if (config === undefined) {
    return {
      rule: undefined,
      visible: true,
      readOnly: false,
      text: `No policies in the config: "${subject.principal}" sees and may call ${name}, as every principal may.`,
    };
  }
  const grant = new Policies(config).grant(subject);
  // Rules cannot be named "default" or "local" (the config refuses it), so this finds none for those grants.
  const rule = config.rules.find((r) => r.name === grant.rule);
  const visible = grant.sees(name);
  const lines = [`Rule "${grant.rule}" decides for "${subject.principal}": ${grant.because}.`];
  if (!visible) {
    const excluded = rule?.exclude.find((glob) => globMatcher([glob])(name));
    lines.push(
      excluded !== undefined
        ? `${name} is hidden: the rule's exclude "${excluded}" matches it. It answers as an unknown tool.`
        : `${name} is hidden: ${rule ? `none of the rule's tools (${rule.tools.map((g) => `"${g}"`).join(", ") || "none"}) matches it` : "the default shows no tool"}. It answers as an unknown tool.`,
    );
  } else {
    const shownBy = rule?.tools.find((glob) => globMatcher([glob])(name));
    lines.push(`${name} is seen${shownBy !== undefined ? ` (the rule's tools "${shownBy}" match it)` : ""}.`);
    lines.push(
      grant.readOnly
        ? `It may be called only if its server marks it read-only (readOnlyHint: true); otherwise the call is refused as not read-only.`
        : "It may be called.",
    );
  }
  if (grant.callsPerMinute !== undefined) lines.push(`Calls per minute: ${grant.callsPerMinute} for this principal, from every surface together.`);
  if (grant.concurrentJobs !== undefined) lines.push(`Background jobs at once: ${grant.concurrentJobs}.`);
  return {
    rule: grant.rule,
    visible,
    readOnly: grant.readOnly,
    ...(grant.callsPerMinute !== undefined ? { callsPerMinute: grant.callsPerMinute } : {}),
    ...(grant.concurrentJobs !== undefined ? { concurrentJobs: grant.concurrentJobs } : {}),
    text: lines.join("\n"),
  };
}
