import type { PolicyConfig } from "@codemux/server";
import { html, type SafeHtml } from "../html";
import { when } from "../layout";

/** A principal as the page lists it: never its token, only what it is granted. */
export interface PrincipalView {
  principal: string;
  groups?: readonly string[];
  /** Undefined: no scopes in force (every right). */
  scopes?: readonly string[];
  expiresAt?: number;
}

/** Principals and policies: who holds a token and with what rights, and the policy rules (read-only). */
export function principalsPage(principals: readonly PrincipalView[], policies: PolicyConfig | undefined, oauth: string | undefined): SafeHtml {
  return html`<h2>Principals with a token</h2>
${
  principals.length
    ? html`<table><thead><tr><th>Principal</th><th>Groups</th><th>Scopes</th><th>Expires</th></tr></thead><tbody>${principals.map(
        (p) =>
          html`<tr><td>${p.principal}</td><td>${p.groups?.join(", ") ?? ""}</td><td>${p.scopes ? p.scopes.join(", ") || "none" : html`<span class="muted">every right (no token declares scopes)</span>`}</td><td>${when(p.expiresAt) || "never"}</td></tr>`,
      )}</tbody></table>`
    : html`<p class="muted">No static tokens.</p>`
}
${oauth ? html`<p>OAuth access tokens of <code>${oauth}</code> are accepted too; their principals are <code>oauth:ISSUER#SUBJECT</code>.</p>` : ""}
<h2>Policies</h2>
${
  policies
    ? html`<p>A principal no rule matches: <strong>${policies.default}</strong>.</p>
<table><thead><tr><th>Rule</th><th>Who</th><th>Tools</th><th>Limits</th></tr></thead><tbody>${policies.rules.map(
        (
          rule,
        ) => html`<tr><td>${rule.name}</td><td>${who(rule)}</td><td>${(rule.tools ?? ["*"]).join(", ")}${rule.exclude?.length ? html`<br><span class="muted">except ${rule.exclude.join(", ")}</span>` : ""}</td>
<td>${[rule.readOnly ? "read-only tools" : "", rule.callsPerMinute ? `${rule.callsPerMinute} calls/min` : "", rule.concurrentJobs ? `${rule.concurrentJobs} jobs at once` : ""].filter(Boolean).join(", ")}</td></tr>`,
      )}</tbody></table>
<p class="muted">codemux policy check PRINCIPAL TOOL explains one decision.</p>`
    : html`<p class="muted">No policies in the config: every principal sees and may call every tool.</p>`
}`;
}

function who(rule: { principals?: readonly string[]; groups?: readonly string[]; scopes?: readonly string[] }): string {
  return [
    rule.principals?.length ? `principals ${rule.principals.join(", ")}` : "",
    rule.groups?.length ? `groups ${rule.groups.join(", ")}` : "",
    rule.scopes?.length ? `scopes ${rule.scopes.join(", ")}` : "",
  ]
    .filter(Boolean)
    .join("; ");
}
