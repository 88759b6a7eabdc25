import { globMatcher, type ToolAnnotations } from "@codemux/core";
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
  /**
   * Whether a call of it would go through: seen, in the catalog, and read-only where the rule asks for it.
   * Undefined when that depends on what the catalog was not asked (or could not say).
   */
  callable?: boolean;
  callsPerMinute?: number;
  concurrentJobs?: number;
  /** The decision in sentences, one a line. */
  text: string;
}

/**
 * What the catalog says of the tool a decision is about: found with its annotations, missing (and why),
 * or unknown (its server is not ready, and why). `codemux policy check` reads it from the config's servers.
 */
export type CatalogFacts = { state: "found"; annotations: ToolAnnotations } | { state: "missing"; why: string } | { state: "unknown"; why: string };

/** The tool of a decision: its `server__tool` name, and what the catalog says of it when it was read. */
export interface CheckedTool {
  name: string;
  catalog?: CatalogFacts;
}

/**
 * Explains the decision for `subject` calling a tool under `config` (`codemux policy check`): which rule
 * matched and why, whether the tool is seen, and what limits hold. Given only a name it needs no server,
 * and a read-only rule's answer says what it depends on; given what the catalog says of the tool, it says
 * whether the tool exists and what its annotations decide.
 *
 * @example
 * explainPolicy(policiesOf(config, "codemux.json"), { principal: "token:ci" }, "github__create_issue").text
 */
export function explainPolicy(config: PolicyConfig | undefined, subject: PolicySubject, tool: string | CheckedTool): PolicyDecision {
  const { name, catalog } = typeof tool === "string" ? { name: tool, catalog: undefined } : tool;
  const exists = catalog?.state === "found" ? true : catalog?.state === "missing" ? false : undefined;
  const missing = catalog?.state === "missing" ? `it is not in the catalog: ${catalog.why} A call of it fails as an unknown tool.` : undefined;
  const unknown = catalog?.state === "unknown" ? `Whether ${name} exists is not known: ${catalog.why}` : undefined;
  if (config === undefined) {
    return {
      rule: undefined,
      visible: true,
      readOnly: false,
      ...(exists === undefined ? {} : { callable: exists }),
      text: [`No policies in the config: "${subject.principal}" sees and may call ${name}, as every principal may.`, missing && `But ${missing}`, unknown]
        .filter((line) => line !== undefined)
        .join("\n"),
    };
  }
  const grant = new Policies(config).grant(subject);
  // Rules cannot be named "default" or "local" (the config refuses it), so this finds none for those grants.
  const rule = config.rules.find((r) => r.name === grant.rule);
  const visible = grant.sees(name);
  const lines = [`Rule "${grant.rule}" decides for "${subject.principal}": ${grant.because}.`];
  let callable: boolean | undefined = visible ? exists : false;
  if (!visible) {
    const excluded = rule?.exclude.find((glob) => globMatcher([glob])(name));
    lines.push(
      excluded !== undefined
        ? `${name} is hidden: the rule's exclude "${excluded}" matches it. It answers as an unknown tool.`
        : `${name} is hidden: ${rule ? `none of the rule's tools (${rule.tools.map((g) => `"${g}"`).join(", ") || "none"}) matches it` : "the default shows no tool"}. It answers as an unknown tool.`,
    );
  } else {
    const shownBy = rule?.tools.find((glob) => globMatcher([glob])(name));
    const why = shownBy !== undefined ? ` (the rule's tools "${shownBy}" match it)` : "";
    if (missing !== undefined) lines.push(`${name} would be seen${why}, but ${missing}`);
    else if (!grant.readOnly) lines.push(`${name} is seen${why}.`, unknown ? `It may be called if it exists. ${unknown}` : "It may be called.");
    else if (catalog?.state === "found") {
      callable = catalog.annotations.readOnlyHint === true;
      lines.push(
        `${name} is seen${why}.`,
        callable
          ? "It may be called: its server marks it read-only (readOnlyHint: true), and the rule lets this principal call read-only tools only."
          : "It may not be called: its server does not mark it read-only (readOnlyHint: true), and the rule lets this principal call read-only tools only; a call is refused as not read-only.",
      );
    } else {
      lines.push(
        `${name} is seen${why}.`,
        `It may be called only if its server marks it read-only (readOnlyHint: true); otherwise the call is refused as not read-only.${unknown ? ` ${unknown}` : ""}`,
      );
    }
  }
  if (grant.callsPerMinute !== undefined) lines.push(`Calls per minute: ${grant.callsPerMinute} for this principal, from every surface together.`);
  if (grant.concurrentJobs !== undefined) lines.push(`Background jobs at once: ${grant.concurrentJobs}.`);
  return {
    rule: grant.rule,
    visible,
    readOnly: grant.readOnly,
    ...(callable === undefined ? {} : { callable }),
    ...(grant.callsPerMinute !== undefined ? { callsPerMinute: grant.callsPerMinute } : {}),
    ...(grant.concurrentJobs !== undefined ? { concurrentJobs: grant.concurrentJobs } : {}),
    text: lines.join("\n"),
  };
}
