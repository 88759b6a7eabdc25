import { lineDiff, type CatalogEntry, type PendingApproval, type ScanFinding } from "@codemux/core";
import { form } from "../form-page";
import { html, type SafeHtml } from "../html";
import { when } from "../layout";
import type { UiSession } from "../ui-sessions";

/** The hint on the Approvals page when the pin plugin is off. */
export const NO_APPROVALS =
  'Nothing is quarantined here: the pin plugin is off. Turn it on with "plugins": { "pin": {} } in the config; tools whose definition changes then wait for approval on this page.';

/** What a waiting item besides a tool is, in a sentence. */
const KIND_WORDS: Record<NonNullable<PendingApproval["kind"]>, string> = {
  instructions: "the instructions",
  resource: "a resource",
  resourceTemplate: "a resource template",
  prompt: "a prompt",
  skill: "a skill",
  skillFile: "a skill's file",
};

/** Characters of one changed field's current value shown. */
const MAX_FIELD_CHARS = 16 * 1024;

/**
 * Approvals: tools the pin plugin quarantined (and the instructions, resources, templates, prompts and skills the scan holds), with the definition's diff against the approved one (or,
 * for a pin file from before definitions were kept, the changed fields' new value); approving lets the
 * next call through, "keep blocked" records the refusal so the page stops asking, and those are listed
 * apart, still approvable.
 */
export function approvalsPage(pending: readonly PendingApproval[], current: (name: string) => CatalogEntry | undefined, session: UiSession): SafeHtml {
  const asking = pending.filter((p) => !p.keptBlockedAt);
  const kept = pending.filter((p) => p.keptBlockedAt);
  return html`${waitingSections(asking, current, session)}${kept.length ? keptBlockedTable(kept, session) : ""}`;
}

function waitingSections(pending: readonly PendingApproval[], current: (name: string) => CatalogEntry | undefined, session: UiSession): SafeHtml {
  return pending.length
    ? html`${pending.map((p) => {
        const entry = current(p.name);
        const definition = (entry?.tool ?? {}) as unknown as Record<string, unknown>;
        return html`<section data-pending="${p.name}">
<h2>${p.name}</h2>
<p>${
          p.reason === "new server"
            ? html`Server <strong>${p.server}</strong> is new and waits for its first approval.`
            : p.reason === "scan" || p.kind
              ? html`The scan found text aimed at the model in ${p.kind ? html`<strong>${KIND_WORDS[p.kind]}</strong> of server <strong>${p.server}</strong>` : "its definition"} (security.scan): the model is shown nothing of ${p.kind === "instructions" ? "them" : "it"} until approved.`
              : html`Its definition changed since it was approved: <strong>${p.changed.join(", ") || "definition"}</strong>.`
        } <span class="muted">Seen ${when(p.seenAt)}.</span></p>
${p.findings?.length ? findingsList(p.findings) : ""}
${
  p.approved && p.proposed
    ? diffBlock(p.name, p.approved, p.proposed)
    : (p.reason === "scan" || p.kind) && p.proposed
      ? html`<h3>Definition <span class="muted">waiting</span></h3><pre class="diff-add">${JSON.stringify(p.proposed, null, 2)}</pre>`
      : p.changed.map((field) => {
          const value = JSON.stringify(definition[field], null, 2) ?? "(removed)";
          return html`<h3>${field} <span class="muted">now</span></h3><pre class="diff-add">${value.length > MAX_FIELD_CHARS ? `${value.slice(0, MAX_FIELD_CHARS)}…` : value}</pre>`;
        })
}
<p>${form({ action: "approve", session, inline: true }, html`<input type="hidden" name="target" value="${p.name}"><input type="hidden" name="hash" value="${p.hash}"><button class="primary" type="submit">Approve ${p.name}</button>`)}
${form({ action: "keep-blocked", session, inline: true }, html`<input type="hidden" name="name" value="${p.name}"><input type="hidden" name="hash" value="${p.hash}"><button type="submit" data-keep-blocked>Keep blocked</button>`)}
<span class="muted">Keep blocked: it stays quarantined and this page stops asking (until its definition changes again).</span></p>
</section>`;
      })}`
    : html`<p class="muted">No tool waits for approval.</p>`;
}

/** The tools an admin kept blocked: still quarantined, no longer asked about, and approvable after all. */
function keptBlockedTable(kept: readonly PendingApproval[], session: UiSession): SafeHtml {
  return html`<h2>Kept blocked</h2>
<table>
<tr><th>Tool</th><th>Why it waits</th><th>Kept blocked since</th><th></th></tr>
${kept.map(
  (
    p,
  ) => html`<tr data-kept-blocked="${p.name}"><td>${p.name}</td><td>${p.reason === "new server" ? "new server" : p.reason === "scan" || p.kind ? "scan findings" : `changed: ${p.changed.join(", ") || "definition"}`}</td><td>${when(p.keptBlockedAt)}</td>
<td>${form({ action: "approve", session, inline: true }, html`<input type="hidden" name="target" value="${p.name}"><input type="hidden" name="hash" value="${p.hash}"><button type="submit">Approve after all</button>`)}</td></tr>`,
)}
</table>`;
}

/** What the scan found in a waiting definition: rule, severity, where, and the text it matched (hidden characters spelled out). */
function findingsList(findings: readonly ScanFinding[]): SafeHtml {
  return html`<ul data-findings>${findings.map((f) => html`<li><strong>${f.severity}</strong> ${f.rule} in <code>${f.path}</code> [${f.start}, ${f.end}): ${f.message}</li>`)}</ul>`;
}

/** The approved definition against the waiting one, line by line, without the diff's two header lines (both are bounded by the pin file: 64 KiB each). */
function diffBlock(name: string, approved: Record<string, unknown>, proposed: Record<string, unknown>): SafeHtml {
  const lines = lineDiff(name, JSON.stringify(approved, null, 2), JSON.stringify(proposed, null, 2))
    .replace(/\n$/, "")
    .split("\n")
    .slice(2);
  return html`<pre data-diff>${lines.map((line) => html`<span class="${line.startsWith("-") ? "diff-del" : line.startsWith("+") ? "diff-add" : ""}">${line}</span>\n`)}</pre>`;
}
